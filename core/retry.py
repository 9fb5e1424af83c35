"""When a failed attempt runs again: the retry rule and its backoff, pure functions.

``cancelled`` never retries; ``internal_error``, ``interrupted by restart`` and ``timed_out``
retry while attempts remain; a declared code only when the kind lists it in ``retry_on``.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable

from jobtable.core.codes import CANCELLED, INTERNAL_ERROR, INTERRUPTED, TIMED_OUT
from jobtable.core.policies import BACKOFF_BASE, BACKOFF_CAP, RetryPolicy

__all__ = [
    "ALWAYS_RETRYABLE",
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "BACKOFF_MOST",
    "RetryPolicy",
    "after_failure",
    "check_policy",
    "is_retryable",
    "retry_delay",
]

BACKOFF_MOST = 100 * 365 * 86400.0
"""No backoff may be longer than a century (a datetime would overflow)."""

ALWAYS_RETRYABLE = frozenset({INTERNAL_ERROR, INTERRUPTED, TIMED_OUT})
"""Codes that say nothing about the job itself: retried whenever attempts remain."""


def retry_delay(policy: RetryPolicy, attempt: int, jitter: float) -> float:
    """Seconds before the retry after ``attempt`` (1-based); ``jitter`` is uniform in [0, 1).

    Exponential backoff with full jitter: a uniform draw in ``[0, min(cap, base * 2 **
    (attempt - 1)))``, so a burst of failures spreads out instead of retrying in lockstep.
    """
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
) -> datetime.datetime | None:
    """When a job whose ``attempt`` ended with ``code`` runs again; None: it fails for good.

    One interrupted by a restart runs again at once: it did nothing wrong, and a deploy
    should not delay it.
    """
    if attempt < policy.max_attempts and is_retryable(policy, code):
        delay = 0.0 if code == INTERRUPTED else retry_delay(policy, attempt, jitter)
        return now + datetime.timedelta(seconds=delay)
    return None


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
