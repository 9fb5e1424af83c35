"""Retry policy: whether a failed attempt runs again, and when.

One pure function decides for every path a job can fail by: a handler's
failure code, a timeout, a stop (shutdown, lost liveness), a runner that
died and was settled by another. The policy is stored on the job when it is
enqueued, so a runner that never registered the kind settles it the same
way as one that did.

- ``cancelled`` never retries.
- ``internal_error``, ``interrupted by restart`` and ``timed_out`` retry
  while attempts remain: they are not the job's verdict on itself.
- A declared code is final unless the kind lists it in ``retry_on``.

The delay is exponential backoff with full jitter (AWS's "full jitter"): a
uniform draw in ``[0, min(cap, base * 2 ** (attempt - 1)))``, so a burst of
failures spreads out instead of retrying in lockstep. A job interrupted by
a restart (its runner died, or stopped it at the end of a shutdown) runs
again at once, as Oban's rescued jobs do: the job did nothing wrong, and a
deploy should not delay it.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
from collections.abc import Iterable
from typing import Any

import attrs

from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT

BACKOFF_BASE = 2.0
"""Seconds: the first retry waits up to this long, each later one up to twice as long."""
BACKOFF_CAP = 600.0
"""Seconds: no retry waits longer than this (ten minutes)."""

BACKOFF_MOST = 100 * 365 * 86400.0
"""No backoff may be longer than a century (a datetime would overflow)."""

ALWAYS_RETRYABLE = frozenset({INTERNAL_ERROR, INTERRUPTED, TIMED_OUT})
"""Codes that say nothing about the job itself: retried whenever attempts remain."""


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How a kind's jobs retry; stored on each job at enqueue (``to_json``)."""

    max_attempts: int = 1
    retry_on: frozenset[str] = frozenset()
    """Declared failure codes that retry (others are final)."""
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP

    def to_json(self) -> str | None:
        """The stored form (None when only the defaults apply, as for most jobs)."""
        if (
            not self.retry_on
            and self.backoff_base == BACKOFF_BASE
            and self.backoff_cap == BACKOFF_CAP
        ):
            return None
        return json.dumps(
            {"retry_on": sorted(self.retry_on), "base": self.backoff_base, "cap": self.backoff_cap},
            separators=(",", ":"),
        )

    @classmethod
    def stored(cls, max_attempts: int, text: str | None) -> RetryPolicy:
        """The policy as a store keeps it: ``max_attempts`` and the JSON from ``to_json``.

        Read on every claim, and most jobs share a few policies: decoded once each.
        """
        return _stored_policy(max_attempts, text)

    @classmethod
    def _decode(cls, max_attempts: int, text: str | None) -> RetryPolicy:
        if not text:
            return cls(max_attempts=max_attempts)
        data: dict[str, Any] = json.loads(text)
        return cls(
            max_attempts=max_attempts,
            retry_on=frozenset(data.get("retry_on", ())),
            backoff_base=float(data.get("base", BACKOFF_BASE)),
            backoff_cap=float(data.get("cap", BACKOFF_CAP)),
        )


@functools.lru_cache(maxsize=256)
def _stored_policy(max_attempts: int, text: str | None) -> RetryPolicy:
    return RetryPolicy._decode(max_attempts, text)


@attrs.frozen
class RetryAt:
    """Queue the job again, due at ``run_at``; ``code`` is why the attempt ended."""

    run_at: datetime.datetime
    code: str


@attrs.frozen
class FailWith:
    """Fail the job for good with ``code``."""

    code: str


def retry_delay(policy: RetryPolicy, attempt: int, jitter: float) -> float:
    """Seconds before the retry after ``attempt`` (1-based); ``jitter`` is uniform in [0, 1)."""
    exponent = min(max(attempt - 1, 0), 62)  # 2**62 is past any cap; avoids huge floats
    ceiling = min(policy.backoff_cap, policy.backoff_base * (2.0**exponent))
    return max(0.0, ceiling * min(max(jitter, 0.0), 1.0))


def is_retryable(policy: RetryPolicy, code: str) -> bool:
    """Whether ``code`` may retry at all under ``policy`` (attempts aside)."""
    if code == CANCELLED:
        return False
    return code in ALWAYS_RETRYABLE or code in policy.retry_on


def after_failure(
    policy: RetryPolicy,
    *,
    attempt: int,
    code: str,
    now: datetime.datetime,
    jitter: float,
) -> RetryAt | FailWith:
    """What happens to a job whose ``attempt`` ended with ``code``: retry later, or fail."""
    if attempt < policy.max_attempts and is_retryable(policy, code):
        delay = 0.0 if code == INTERRUPTED else retry_delay(policy, attempt, jitter)
        return RetryAt(run_at=now + datetime.timedelta(seconds=delay), code=code)
    return FailWith(code=code)


def check_policy(
    *, max_attempts: object, retry_on: Iterable[str], backoff: object, declared: frozenset[str]
) -> RetryPolicy:
    """A registration's retry settings as a policy; ValueError says what is wrong.

    ``backoff`` is None (the defaults) or a ``(base, cap)`` pair of seconds.
    ``retry_on`` may list only the kind's declared codes (the reserved ones
    that retry do so already; ``cancelled`` never does).
    """
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError("max_attempts must be a whole number >= 1")
    if isinstance(retry_on, str):
        raise ValueError("retry_on must be a list of codes, not one string")
    codes = frozenset(retry_on)
    undeclared = sorted(code for code in codes if code not in declared)
    if undeclared:
        raise ValueError(f"retry_on lists codes the kind does not declare: {undeclared}")
    base, cap = BACKOFF_BASE, BACKOFF_CAP
    if backoff is not None:
        if not (isinstance(backoff, tuple) and len(backoff) == 2):
            raise ValueError("backoff must be a (base, cap) pair of seconds")
        base, cap = (_seconds(value, "backoff") for value in backoff)
        if cap < base:
            raise ValueError("backoff cap must be at least its base")
    return RetryPolicy(
        max_attempts=max_attempts, retry_on=codes, backoff_base=base, backoff_cap=cap
    )


def _seconds(value: object, name: str) -> float:
    try:
        number = float(value) if isinstance(value, int | float) else math.nan
    except OverflowError:
        number = math.inf
    if isinstance(value, bool) or not math.isfinite(number) or not 0 <= number <= BACKOFF_MOST:
        raise ValueError(f"{name} must be seconds from 0 to {BACKOFF_MOST:g} (a century)")
    return number
