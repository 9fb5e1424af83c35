"""What the enqueue's shortcuts must not change: kinds registered late, two clients' kinds,
strict payloads with the same words, options still checked, ids as uuid spells them."""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs
import pytest

from jobtable.core import InvalidOptionError, InvalidPayloadError
from jobtable.core.ids import JobIdGenerator, _RandomPool
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


@attrs.frozen
class Note:
    text: str


@attrs.frozen
class Loose:
    value: Any = None


def noted(ctx: object, payload: Note) -> CountResult:
    return CountResult(done=len(payload.text))


def test_a_kind_registered_after_enqueues_is_stored_as_its_own(make_system):
    system = make_system()
    counting = system.kinds.register("count", count, payload=CountPayload)
    first = counting.enqueue(CountPayload(steps=2))
    noting = system.kinds.register("note", noted, payload=Note)
    second = noting.enqueue(Note("hi"))
    by_name = system.runner.enqueue("note", {"text": "yo"})
    rows = [system.store.row(job_id) for job_id in (first, second, by_name)]
    assert [(row["kind"], json.loads(row["payload"])) for row in rows] == [
        ("count", {"steps": 2}),
        ("note", {"text": "hi"}),
        ("note", {"text": "yo"}),
    ]


def test_two_clients_check_payloads_by_their_own_kinds(make_system):
    one, other = make_system(), make_system()
    one.kinds.register("task", count, payload=CountPayload)
    other.kinds.register("task", noted, payload=Note)
    assert one.store.row(one.runner.enqueue("task", {"steps": 1}))["payload"] == '{"steps":1}'
    assert other.store.row(other.runner.enqueue("task", {"text": "a"}))["payload"] == (
        '{"text":"a"}'
    )
    with pytest.raises(InvalidPayloadError) as refused:
        other.runner.enqueue("task", {"steps": 1})
    assert refused.value.problems == (
        "required field missing @ $.text",
        "unknown field 'steps' @ $",
    )


def test_a_handle_refuses_what_it_always_refused_in_the_same_words(make_system):
    system = make_system()
    counting = system.kinds.register("count", count, payload=CountPayload)
    loose = system.kinds.register("loose", count, payload=Loose)
    with pytest.raises(TypeError, match=r"^count: payload must be a CountPayload$"):
        counting.enqueue(Note("wrong type"))  # type: ignore[arg-type]
    with pytest.raises(InvalidPayloadError) as refused:
        loose.enqueue(Loose(value={1: "a"}))
    assert refused.value.problems == ("expected string keys only @ $.value",)
    with pytest.raises(InvalidPayloadError) as refused:
        loose.enqueue(Loose(value="lone \udc80 surrogate"))
    assert refused.value.problems == (
        "expected valid Unicode text, not a lone surrogate @ $.value",
    )
    with pytest.raises(InvalidOptionError, match="priority"):
        counting.enqueue(CountPayload(), priority=10)
    assert loose.enqueue(Loose(value="ünïcode ✓")) and counting.enqueue(CountPayload(), priority=3)
    assert system.store.inner._rows and len(system.store.inner._rows) == 2


def test_an_enqueue_with_options_stores_them_and_one_without_the_kinds_defaults(make_system):
    system = make_system()
    counting = system.kinds.register("count", count, payload=CountPayload, queue="q", priority=4)
    plain = system.store.row(counting.enqueue(CountPayload()))
    told = system.store.row(counting.enqueue(CountPayload(), queue="other", priority=1))
    assert (plain["queue"], plain["priority"]) == ("q", 4)
    assert (told["queue"], told["priority"]) == ("other", 1)


def test_ids_are_spelled_as_uuid_spells_them():
    ids = JobIdGenerator()
    for made in (ids.next_id(1_767_225_600_000 + n) for n in range(300)):
        assert str(uuid.UUID(made)) == made and uuid.UUID(made).version == 7


def test_a_dropped_random_pool_never_repeats_the_bits_it_would_have_given():
    # What a forked child does (os.register_at_fork): the parent's read-ahead is not reused.
    parent = _RandomPool()
    parent.bits()
    child = _RandomPool()
    child._block, child._at = parent._block, parent._at  # the state a fork copies
    child.drop()
    assert [child.bits() for _ in range(4)] != [parent.bits() for _ in range(4)]
