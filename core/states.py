"""What a job is waiting for, or how it ended: the operator's states, finer than the four
statuses GET's five keys keep for reference clients.

``scheduled``: queued and due later, with no failed attempt since it was created or last
ran (a snooze counts as none); ``retrying``: queued and due later after a failed
attempt; ``available``: queued and due (held back by a limit too: its detail says why);
``running``; ``succeeded``; ``cancelled`` and ``timed_out``: failed with that code;
``failed``: failed with any other code. A store reads them from the row's stored status
(``scheduled`` is stored apart from ``queued``), its last attempt's code and its error;
each state's test is written once here, for the stores' lists and counts too.
"""

from __future__ import annotations

import enum

from jobtable.core.codes import CANCELLED, TIMED_OUT
from jobtable.core.outcome import SNOOZED


class State(enum.Enum):
    SCHEDULED = "scheduled"
    AVAILABLE = "available"
    RETRYING = "retrying"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


STATES = tuple(state.value for state in State)


def job_state(stored_status: str, last_code: str | None, error: str | None) -> State:
    """The state of a row stored ``stored_status`` whose latest attempt ended ``last_code``
    and whose error is ``error``."""
    if stored_status == "scheduled":
        return State.SCHEDULED if last_code in (None, SNOOZED) else State.RETRYING
    if stored_status == "queued":
        return State.AVAILABLE
    if stored_status == "failed":
        if error == CANCELLED:
            return State.CANCELLED
        return State.TIMED_OUT if error == TIMED_OUT else State.FAILED
    return State(stored_status)


STORED_STATUS = {
    State.SCHEDULED: "scheduled",
    State.RETRYING: "scheduled",
    State.AVAILABLE: "queued",
    State.RUNNING: "running",
    State.SUCCEEDED: "succeeded",
    State.FAILED: "failed",
    State.CANCELLED: "failed",
    State.TIMED_OUT: "failed",
}
"""The stored status each state's rows have."""

SQL_TEST = {
    State.SCHEDULED: f"(last_code IS NULL OR last_code = '{SNOOZED}')",
    State.RETRYING: f"(last_code IS NOT NULL AND last_code <> '{SNOOZED}')",
    State.CANCELLED: f"error = '{CANCELLED}'",
    State.TIMED_OUT: f"error = '{TIMED_OUT}'",
    State.FAILED: f"(error IS NULL OR error NOT IN ('{CANCELLED}', '{TIMED_OUT}'))",
}
"""What tells a state's rows apart from the others of their stored status, in SQL both
engines read (constants only: no value of a caller's reaches it)."""

SQL_SCHEDULED_STATE = f"CASE WHEN {SQL_TEST[State.SCHEDULED]} THEN 'scheduled' ELSE 'retrying' END"
"""The state of a row stored ``scheduled``, in SQL (it reads ``last_code`` only)."""
SQL_FAILED_STATE = (
    f"CASE WHEN {SQL_TEST[State.CANCELLED]} THEN 'cancelled'"
    f" WHEN {SQL_TEST[State.TIMED_OUT]} THEN 'timed_out' ELSE 'failed' END"
)
"""The state of a row stored ``failed``, in SQL (it reads ``error`` only)."""
SQL_STATE = (
    f"CASE status WHEN 'scheduled' THEN {SQL_SCHEDULED_STATE} WHEN 'queued' THEN 'available'"
    f" WHEN 'failed' THEN {SQL_FAILED_STATE} ELSE status END"
)
"""A row's state as one SQL expression, the same rule as ``job_state``."""


def check_state(value: object) -> State:
    """A state named by a caller; ValueError listing the states otherwise."""
    try:
        return State(value)
    except ValueError:
        raise ValueError(f"state must be one of {', '.join(STATES)}") from None
