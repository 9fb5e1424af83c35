"""What an attempt ended with, what to record for it, and the pure rule between the two.

The runner turns each ``AttemptEnd`` into one ``Outcome`` with ``decide``; whoever settles
a job whose runner died or left it running uses ``settle_interrupted``. Stores record it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

import attrs

from jobtable.core.codes import INTERNAL_ERROR
from jobtable.core.policies import RetryPolicy
from jobtable.core.retry import after_failure

SNOOZED = "snoozed"
"""The code a snoozed attempt is logged with (not a failure code)."""

# -- what an attempt ended with ----------------------------------------------


@attrs.frozen(kw_only=True)
class Succeeded:
    """The handler returned; ``result`` is its public JSON text."""

    result: str


@attrs.frozen(kw_only=True)
class Raised:
    """The attempt failed with ``code``: a declared failure, or a runner code."""

    code: str
    reason: str
    """A fixed phrase for the log, never an exception's text."""
    exception_type: str | None = None
    """The exception's class name, for the log (None: a declared failure or a runner code)."""
    error_class: str | None = None
    """The exception's class path (``builtins.ValueError``), stored with the attempt; never
    its message."""


@attrs.frozen(kw_only=True)
class Stopped:
    """The handler failed after it was told to stop; ``code`` says why it was told.

    ``cancelled``, ``timed_out``, or ``interrupted by restart`` (a shutdown, lost liveness).
    """

    code: str


@attrs.frozen(kw_only=True)
class Snoozed:
    """The handler asked to run again ``seconds`` from now, without using an attempt."""

    seconds: float


AttemptEnd = Succeeded | Raised | Stopped | Snoozed

# -- what to record ----------------------------------------------------------


@attrs.frozen(kw_only=True)
class Succeed:
    """The job succeeded with ``result`` (JSON text)."""

    result: str


@attrs.frozen(kw_only=True)
class Fail:
    """The job failed for good with ``code``, keeping its last partial result."""

    code: str
    error_class: str | None = None
    """The class path of the exception the attempt raised, if it raised one."""


@attrs.frozen(kw_only=True)
class RunAgain:
    """Queue the job again, due at ``run_at``, after an attempt that ended with ``code``.

    ``counts_attempt`` False: the attempt is not spent (a snooze). A job someone asked to
    cancel meanwhile fails ``cancelled`` instead: the store applies that rule.
    """

    run_at: datetime.datetime
    code: str
    counts_attempt: bool = True
    error_class: str | None = None
    """The class path of the exception the attempt raised, if it raised one."""


Outcome = Succeed | Fail | RunAgain


def decide(
    end: AttemptEnd,
    policy: RetryPolicy,
    *,
    attempt: int,
    now: datetime.datetime,
    jitter: Callable[[], float],
) -> Outcome:
    """What to record for ``attempt`` of a job, by the retry policy stored on it.

    ``jitter`` draws the backoff's random share, uniform in [0, 1); only a failure draws.
    """
    if isinstance(end, Succeeded):
        return Succeed(result=end.result)
    if isinstance(end, Snoozed):
        run_at = now + datetime.timedelta(seconds=end.seconds)
        return RunAgain(run_at=run_at, code=SNOOZED, counts_attempt=False)
    error_class = end.error_class if isinstance(end, Raised) else None
    return _after_failure(
        policy, attempt=attempt, code=end.code, now=now, jitter=jitter, error_class=error_class
    )


def settle_interrupted(
    policy: RetryPolicy | None,
    *,
    attempt: int,
    code: str,
    now: datetime.datetime,
    jitter: Callable[[], float],
) -> Outcome:
    """What to record for a job left running (its runner died, or could not record it).

    The rule ``decide`` applies to a failure. A job found running has had at least one
    attempt, whatever its stored count says. ``policy`` None: its row's policy cannot be
    read, and it fails ``internal_error``.
    """
    if policy is None:
        return Fail(code=INTERNAL_ERROR)
    return _after_failure(policy, attempt=max(attempt, 1), code=code, now=now, jitter=jitter)


def _after_failure(
    policy: RetryPolicy,
    *,
    attempt: int,
    code: str,
    now: datetime.datetime,
    jitter: Callable[[], float],
    error_class: str | None = None,
) -> Outcome:
    run_at = after_failure(policy, attempt=attempt, code=code, now=now, jitter=jitter())
    if run_at is None:
        return Fail(code=code, error_class=error_class)
    return RunAgain(run_at=run_at, code=code, error_class=error_class)
