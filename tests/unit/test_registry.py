"""Registering kinds: everything checkable is refused at registration, with a clear message."""

from __future__ import annotations

import attrs
import pytest

from jobtable.core import JobContext, RegistrationError, RunnerStateError
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def unannotated(ctx, payload):
    return CountResult(done=0)


class Opaque:
    pass


@attrs.frozen
class HoldsOpaque:
    thing: Opaque


class NotAttrs:
    def __init__(self, steps: int) -> None:
        self.steps = steps


class NoPublic:
    done: int = 0


def no_public(ctx: JobContext, payload: CountPayload) -> NoPublic:
    return NoPublic()


@pytest.fixture
def kinds(make_system):
    system = make_system()
    system.kinds.register("count", count, payload=CountPayload)
    return system.kinds


def test_a_registered_kind_returns_a_handle_that_enqueues(make_system):
    system = make_system()
    handle = system.kinds.register("count", count, payload=CountPayload, failure_codes=["x"])
    job_id = handle.enqueue(CountPayload(steps=2))
    assert handle.name == "count"
    assert system.runner.get(job_id).status == "queued"


@pytest.mark.parametrize(
    ("kind", "handler", "options", "message"),
    [
        ("count", count, {"payload": CountPayload}, "already registered"),
        ("", count, {"payload": CountPayload}, "non-empty"),
        ("  ", count, {"payload": CountPayload}, "non-empty"),
        ("nil", None, {"payload": CountPayload}, "callable"),
        ("opaque", count, {"payload": HoldsOpaque}, "cattrs cannot structure"),
        ("plain", count, {"payload": NotAttrs}, "attrs class"),
        ("none", count, {"payload": None}, "attrs class"),
        ("nopublic", no_public, {"payload": CountPayload}, "no public"),
        ("explicit", count, {"payload": CountPayload, "result": NoPublic}, "no public"),
        ("unannotated", unannotated, {"payload": CountPayload}, "result type"),
        ("code", count, {"payload": CountPayload, "failure_codes": ["Bad Code"]}, "must match"),
        ("code", count, {"payload": CountPayload, "failure_codes": ["internal_error"]}, "reserved"),
        ("code", count, {"payload": CountPayload, "failure_codes": ["unknown_kind"]}, "reserved"),
        (
            "code", count, {"payload": CountPayload, "failure_codes": ["interrupted by restart"]},
            "must match",
        ),
        ("noop", count, {"payload": CountPayload}, "already registered"),
    ],
)  # fmt: skip
def test_bad_registrations_are_refused(kinds, kind, handler, options, message):
    with pytest.raises(RegistrationError, match=message):
        kinds.register(kind, handler, **options)


def test_an_unannotated_handler_registers_with_an_explicit_result(kinds):
    assert kinds.register("lambda", unannotated, payload=CountPayload, result=CountResult)


def test_registration_after_start_is_refused(make_system):
    system = make_system().start()
    with pytest.raises(RunnerStateError, match="already started"):
        system.kinds.register("late", count, payload=CountPayload)


def test_enqueue_refuses_a_payload_of_another_type(kinds, make_system):
    handle = make_system().kinds.register("typed", count, payload=CountPayload)
    with pytest.raises(TypeError, match="CountPayload"):
        handle.enqueue({"steps": 1})
