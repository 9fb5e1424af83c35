"""Text from outside that no store could keep is checked in the core, for Python callers too.

PostgreSQL refuses NUL and both engines a lone surrogate; a newline in a
logged value forges a log line. A Python caller gets InvalidOptionError
naming the field (or RegistrationError, or "no such job" for an id no job
could have), and the store is never handed the text.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.memory import MemoryStore
from jobtable.core import (
    EnqueueOptions,
    InvalidOptionError,
    NoopPayload,
    RegistrationError,
    Runner,
)
from jobtable.core.ids import JobIdGenerator, could_exist
from jobtable.core.text import plain
from tests.unit.kinds_for_tests import CountPayload, count

UNSTORABLE = [
    "a\x00b",  # PostgreSQL's text refuses NUL
    "lone \udcff",  # a non-UTF-8 byte, as a filename or argv gives it: no store takes it
    "a\nforged line",
    "tab\there",
    "del\x7f",
    "next\x85line",  # C1 NEL
    "line\u2028separator",
    "",
    "k" * 256,
]


class TextsSeen:
    """A store that notes every text it is handed, inside the values it is given too."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            self.texts.extend(_texts([*args, *kwargs.values()]))
            return found(*args, **kwargs)

        return call


def _texts(values: list[Any]) -> list[str]:
    pending, texts = list(values), []
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list | tuple | frozenset | set):
            pending.extend(value)
        elif attrs.has(type(value)):
            pending.extend(getattr(value, field.name) for field in attrs.fields(type(value)))
    return texts


@pytest.fixture
def seen() -> TextsSeen:
    return TextsSeen(MemoryStore())


@pytest.fixture
def runner(seen) -> Runner:
    return Runner(seen, FakeClock(), workers=0)


@pytest.mark.parametrize("text", UNSTORABLE)
def test_a_unique_key_no_store_could_keep_is_refused_by_name_and_by_handle(runner, seen, text):
    handle = runner.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(InvalidOptionError) as by_handle:
        handle.enqueue(CountPayload(), unique_key=text)
    with pytest.raises(InvalidOptionError) as by_name:
        runner.enqueue("count", {}, EnqueueOptions(unique_key=text))
    with pytest.raises(InvalidOptionError) as many:
        handle.enqueue_many([handle.job(CountPayload(), unique_key=text)])
    assert {by_handle.value.field, by_name.value.field, many.value.field} == {"unique_key"}
    assert text not in seen.texts


@pytest.mark.parametrize("text", UNSTORABLE)
def test_an_id_no_job_could_have_is_no_job_and_no_store_is_asked(runner, seen, text):
    assert runner.get(text) is None
    assert runner.detail(text) is None
    assert runner.cancel(text) is None
    assert runner.retry(text) is None
    assert runner.events(text) is None
    assert text not in seen.texts


@pytest.mark.parametrize("text", UNSTORABLE)
@pytest.mark.parametrize("field", ["kind", "queue", "after"])
def test_a_list_filter_or_position_no_store_could_keep_is_refused_naming_it(
    runner, seen, text, field
):
    with pytest.raises(InvalidOptionError) as refused:
        runner.list_jobs(**{field: text})
    assert refused.value.field == field
    assert text not in seen.texts


@pytest.mark.parametrize("key", ["a\x00b", "caf\u00e9", "two words", "", "k" * 256])
def test_an_idempotency_key_is_checked_by_the_runner(runner, seen, key):
    with pytest.raises(InvalidOptionError) as refused:
        runner.begin_idempotent(key, "hash")
    assert refused.value.field == "Idempotency-Key"
    assert key not in seen.texts


@pytest.mark.parametrize("text", UNSTORABLE)
def test_a_kind_name_no_store_could_keep_is_refused_at_registration(runner, text):
    with pytest.raises(RegistrationError, match="register: kind must be a non-empty string"):
        runner.kinds.register(text, count, payload=CountPayload)


@pytest.mark.parametrize(
    "text", ["order-17", "job-pending", "café 漢字 🙂", " spaced ", "a/b:c@d", "k" * 255]
)
def test_plain_text_with_spaces_and_any_letters_is_kept_and_found(runner, seen, text):
    """Ids migrated from the reference are any such text: they are still looked up."""
    assert plain(text) and could_exist(text)
    job_id = runner.builtins.noop.enqueue(NoopPayload(), unique_key=text)
    assert runner.builtins.noop.enqueue(NoopPayload(), unique_key=text).duplicate
    assert runner.get(text) is None and text in seen.texts
    assert could_exist(str(job_id)) and could_exist(JobIdGenerator().next_id(0))
