"""Data that cannot break the API: what cannot be stored as strict JSON is refused when recorded."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from jobtable.core import INTERNAL_ERROR, InvalidPayloadError, JobContext, Status
from jobtable.core.codec import NotStrictJsonError, dumps
from tests.unit.kinds_for_tests import CountPayload

UNSTORABLE = {
    "a lone surrogate (a filename from a non-UTF-8 folder)": {"file": "report-\udcff.txt"},
    "keys 1 and '1', one of which JSON would lose": {1: "a", "1": "b"},
    "a key that is not a string": {(1, 2): "a"},
    "an integer past 64 bits": {"n": 2**70},
    "NaN": {"x": float("nan")},
    "a value JSON has no form for": {"when": object()},
}


@pytest.mark.parametrize("value", UNSTORABLE.values(), ids=UNSTORABLE.keys())
def test_strict_json_refuses_what_a_reader_could_not_take_back(value):
    with pytest.raises(NotStrictJsonError) as refused:
        dumps(value)
    assert "@ $" in refused.value.problem
    assert "udcff" not in refused.value.problem and "report" not in refused.value.problem


def test_strict_json_keeps_what_it_can_store():
    value = {"name": "Zoë ✓", "n": -(2**63), "items": [1.5, True, None, "<b>"]}
    assert dumps(value) == '{"name":"Zoë ✓","n":-9223372036854775808,"items":[1.5,true,null,"<b>"]}'


@attrs.frozen
class Anything:
    value: Any

    def public(self) -> Any:
        return self.value


@pytest.mark.parametrize("value", UNSTORABLE.values(), ids=UNSTORABLE.keys())
def test_a_result_that_cannot_be_stored_fails_the_job_and_the_job_stays_readable(
    make_system, value
):
    system = make_system()

    def returns(ctx: JobContext, payload: CountPayload) -> Anything:
        return Anything(value)

    kind = system.kinds.register("returns", returns, payload=CountPayload)
    system.start()
    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error, job.result) == (Status.FAILED, INTERNAL_ERROR, None)
    assert job.to_public()["error"] == INTERNAL_ERROR  # readable, as every job must be
    assert "reason=result does not encode" in system.logs.text


@pytest.mark.parametrize("value", UNSTORABLE.values(), ids=UNSTORABLE.keys())
def test_a_partial_result_that_cannot_be_stored_fails_the_job_keeping_the_last_good_one(
    make_system, value
):
    system = make_system()

    def publishes(ctx: JobContext, payload: CountPayload) -> Anything:
        ctx.publish(Anything({"step": 1}))
        ctx.publish(Anything(value))  # raises: the handler lets it go
        return Anything({"step": 3})

    kind = system.kinds.register("publishes", publishes, payload=CountPayload)
    system.start()
    job = system.wait_for(kind.enqueue(CountPayload()))
    assert (job.status, job.error, job.result) == (Status.FAILED, INTERNAL_ERROR, {"step": 1})
    assert "reason=partial result does not encode" in system.logs.text


@attrs.frozen
class Named:
    name: str


def test_a_payload_that_cannot_be_stored_is_refused_at_enqueue(make_system):
    system = make_system()
    kind = system.kinds.register(
        "named", lambda ctx, p: Anything(1), payload=Named, result=Anything
    )
    with pytest.raises(InvalidPayloadError) as refused:
        kind.enqueue(Named(name="report-\udcff.txt"))
    assert refused.value.problems == ("expected valid Unicode text, not a lone surrogate @ $.name",)
    with pytest.raises(InvalidPayloadError):
        system.runner.enqueue("named", {"name": "\ud800"})
    assert system.store.claim_next(runner_id="x", now=system.clock.now()) is None  # none stored
