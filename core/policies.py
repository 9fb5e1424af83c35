"""A kind's retry policy as a value: what a job stores at enqueue and stores read back.

The rules that apply it (when a failed attempt runs again) are core/retry.py's.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import attrs

BACKOFF_BASE = 2.0
"""Seconds: the first retry waits up to this long, each later one up to twice as long."""
BACKOFF_CAP = 600.0
"""Seconds: no retry waits longer than this (ten minutes)."""


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
