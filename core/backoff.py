"""Claim-retry backoff: how long a worker waits after a claim hit a database error.

A worker whose claim failed must not park until the next wake (a job queued
before a restart has none), nor spin against a sick database: it retries
after 50 ms, doubling up to 5 s. Any successful or empty claim resets it.
"""

from __future__ import annotations

CLAIM_RETRY_INITIAL = 0.05
CLAIM_RETRY_MAXIMUM = 5.0


def next_claim_retry_delay(
    previous: float | None,
    *,
    initial: float = CLAIM_RETRY_INITIAL,
    maximum: float = CLAIM_RETRY_MAXIMUM,
) -> float:
    """The delay before the next retry, given the previous one (None after a good claim)."""
    if previous is None:
        return min(initial, maximum)
    return min(previous * 2, maximum)
