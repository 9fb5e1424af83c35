"""Bulk actions: cancel or retry every job that matches a filter, in short batches.

An operator's filter (state, kind, queue, creation window) picks the jobs; the
action applies only to the states it can change (a cancel to jobs not finished, a retry
to failed, cancelled and timed-out ones). It reaches the jobs whose id is not newer than
the newest job when it began (ids sort by creation), so jobs enqueued meanwhile are left
alone, and it walks them newest first in batches of ``BATCH``, each one short
transaction: no lock is held for long, and repeating the action changes nothing more.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from jobtable.core.enqueue_options import InvalidOptionError, check_queue, check_text
from jobtable.core.jobs import JobFilter
from jobtable.core.states import STORED_STATUS, State, check_state

BATCH = 500
"""Jobs changed per transaction."""


class BulkAction(enum.Enum):
    CANCEL = "cancel"
    RETRY = "retry"

    @property
    def states(self) -> tuple[State, ...]:
        """The states whose jobs this action changes."""
        return _ACTS_ON[self]


_ACTS_ON = {
    BulkAction.CANCEL: (State.SCHEDULED, State.AVAILABLE, State.RETRYING, State.RUNNING),
    BulkAction.RETRY: (State.FAILED, State.CANCELLED, State.TIMED_OUT),
}


@attrs.frozen(kw_only=True)
class BulkFilter:
    """Which jobs a bulk action is for; each field None means any."""

    state: State | None = None
    kind: str | None = None
    queue: str | None = None
    created_after: datetime.datetime | None = None
    """Created at or after this moment."""
    created_before: datetime.datetime | None = None
    """Created before this moment."""

    def described(self) -> str:
        """The filter as ``name=value`` words for the audit log (``any`` for no filter)."""
        words = [
            f"{name}={value.value if isinstance(value, State) else value}"
            for name, value in attrs.asdict(self, recurse=False).items()
            if value is not None
        ]
        return " ".join(words) or "any"


@attrs.frozen(kw_only=True)
class BulkBatch:
    """What a store did to one batch: how many jobs matched, the last one's id (where the
    next batch starts), which changed state now, and which running ones were asked to stop."""

    matched: int
    last_id: str | None
    changed: tuple[str, ...] = ()
    stop_requested: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, ids: Sequence[str], changed: Iterable[str], stop_requested: Iterable[str] = ()
    ) -> BulkBatch:
        """The batch whose matching jobs were ``ids``, newest first."""
        return cls(
            matched=len(ids),
            last_id=ids[-1] if ids else None,
            changed=tuple(changed),
            stop_requested=tuple(stop_requested),
        )


@attrs.frozen(kw_only=True)
class BulkResult:
    """``matched``: jobs the filter picked that the action applies to; ``changed``: those it
    changed (a running job asked to stop counts; a dry run changes none)."""

    matched: int
    changed: int
    through: str | None = None
    """The newest job it could reach (None: there was none)."""


def check_state_of(action: BulkAction, which: BulkFilter) -> None:
    """InvalidOptionError for a state the action cannot change (a retry of running jobs)."""
    if which.state is not None and which.state not in action.states:
        allowed = ", ".join(state.value for state in action.states)
        raise InvalidOptionError("filter.state", f"{action.value} applies to jobs {allowed}")


def action_filter(action: BulkAction, which: BulkFilter, *, through: str) -> JobFilter:
    """The list filter an action walks, jobs not newer than ``through``: one state's, or
    (no state given) every stored status the action applies to in one walk, so a job that
    moves from one of its states to another while the walk goes on is still reached.
    InvalidOptionError for a state the action cannot change (``check_state_of``)."""
    check_state_of(action, which)
    stored = None
    if which.state is None:
        stored = tuple(sorted({STORED_STATUS[state] for state in action.states}))
    return JobFilter(
        state=which.state,
        stored=stored,
        kind=which.kind,
        queue=which.queue,
        created_after=which.created_after,
        created_before=which.created_before,
        through=through,
    )


FILTER_FIELDS = ("state", "kind", "queue", "created_after", "created_before")


def bulk_filter(
    fields: Mapping[str, object],
    read_time: Callable[[str], datetime.datetime],
) -> BulkFilter:
    """A filter from a caller's fields (HTTP's JSON object, the CLI's flags), strictly:
    an unknown field, a wrong type or an unknown state raises InvalidOptionError.
    ``read_time`` reads an RFC 3339 time (ValueError with what is wrong)."""
    unknown = sorted(set(fields) - set(FILTER_FIELDS))
    if unknown:
        known = ", ".join(FILTER_FIELDS)
        raise InvalidOptionError(f"filter.{unknown[0]}", f"is not a filter; use {known}")
    values = {name: fields.get(name) for name in FILTER_FIELDS}
    for name, value in values.items():
        if value is not None and not isinstance(value, str):
            raise InvalidOptionError(f"filter.{name}", "must be a string or null")
    times: dict[str, datetime.datetime | None] = {}
    for name in ("created_after", "created_before"):
        text = values[name]
        try:
            times[name] = None if text is None else read_time(str(text))
        except ValueError as error:
            raise InvalidOptionError(f"filter.{name}", str(error)) from None
    try:
        state = None if values["state"] is None else check_state(values["state"])
    except ValueError as error:
        raise InvalidOptionError("filter.state", str(error).removeprefix("state ")) from None
    kind, queue = values["kind"], values["queue"]
    try:
        return BulkFilter(
            state=state,
            kind=None if kind is None else check_text(kind, "kind"),
            queue=None if queue is None else check_queue(queue),
            created_after=times["created_after"],
            created_before=times["created_before"],
        )
    except InvalidOptionError as error:
        raise InvalidOptionError(f"filter.{error.field}", error.problem) from None
