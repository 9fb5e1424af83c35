"""Runner.enqueue(kind, payload): the reference's TestRunnerEnqueueByKindName, ported."""

from __future__ import annotations

import attrs
import pytest

from jobtable.core import InvalidPayloadError, Status, UnknownKindError
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


def test_enqueue_by_kind_name_validates_and_stores_nothing_on_refusal(make_system):
    system = make_system()
    system.kinds.register("count", count, payload=CountPayload)

    with pytest.raises(UnknownKindError):
        system.runner.enqueue("no_such_kind", {})
    for payload in ({"steps": "three"}, {"other": 1}, [], "", None, {"steps": 2**63}):
        with pytest.raises(InvalidPayloadError) as refused:
            system.runner.enqueue("count", payload)
        assert refused.value.problems
    assert system.store.claims == 0
    assert system.store.inner._rows == {}

    job_id = system.runner.enqueue("count", {"steps": 3})
    system.start()
    job = system.wait_for(job_id)
    assert (job.kind, job.status, job.result) == ("count", Status.SUCCEEDED, {"done": 3})


def test_an_enqueue_by_name_is_stored_exactly_as_the_handle_stores_it(make_system):
    system = make_system()
    handle = system.kinds.register("count", count, payload=CountPayload)
    by_name = system.runner.enqueue("count", {})
    by_handle = handle.enqueue(CountPayload())
    assert system.store.row(by_name)["payload"] == system.store.row(by_handle)["payload"]


def test_a_payload_error_names_the_kind_and_each_field_but_never_a_value(make_system):
    system = make_system()
    system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(InvalidPayloadError) as refused:
        system.runner.enqueue("count", {"steps": "three-secret", "other": "hidden-secret"})
    message = str(refused.value)
    assert message == (
        "payload does not match the job kind 'count': "
        "expected an integer @ $.steps; unknown field 'other' @ $"
    )
    assert refused.value.problems == (
        "expected an integer @ $.steps",
        "unknown field 'other' @ $",
    )
    assert "secret" not in message  # no submitted value, not even a key's


def test_a_payload_error_lists_ten_problems_and_counts_the_rest():
    problems = tuple(f"required field missing @ $.f{n}" for n in range(12))
    message = str(InvalidPayloadError("wide", problems))
    assert "$.f9" in message and "$.f10" not in message
    assert message.endswith("(and 2 more)")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_number_json_cannot_carry_is_refused_by_name_and_by_handle(value):
    from jobtable.adapters.fake_clock import FakeClock
    from jobtable.adapters.memory import MemoryStore
    from jobtable.core import InvalidPayloadError, Runner

    @attrs.frozen
    class Measured:
        level: float

    runner = Runner(MemoryStore(), FakeClock())
    kind = runner.kinds.register("measure", count, payload=Measured, result=CountResult)
    with pytest.raises(InvalidPayloadError) as by_name:
        runner.enqueue("measure", {"level": value})
    assert by_name.value.problems == ("expected a number, not NaN or infinity @ $.level",)
    with pytest.raises(InvalidPayloadError) as by_handle:
        kind.enqueue(Measured(level=value))
    assert str(by_handle.value) == (
        "payload does not match the job kind 'measure': "
        "expected a number, not NaN or infinity @ $.level"
    )
    assert runner.drain() == []
