"""Idempotency keys for enqueue requests (the IETF httpapi draft, as Stripe does it).

A client that sends ``Idempotency-Key`` may send the same request again (a
timeout, a retry by a proxy) and get the first answer back instead of a
second job. The store keeps each key with a hash of the parsed request and,
once there is one, the answer; this module decides what a repeat gets.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

import attrs

from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.jobs import Enqueued

KEEP_FOR = datetime.timedelta(hours=24)
"""How long a key and its answer are kept, whatever the jobs' retention."""

IN_FLIGHT_FOR = datetime.timedelta(minutes=1)
"""A key with no answer after this long belongs to a request that never finished (its
process died): the next request with it starts over."""

MAX_KEY_LENGTH = 255


@attrs.frozen(kw_only=True)
class KeptAnswer:
    """What the store holds for a key: the request's hash and, once done, the answer."""

    request_hash: str
    status: int | None
    body: str | None
    created_at: datetime.datetime


@attrs.frozen
class Replay:
    status: int
    body: str


@attrs.frozen
class InFlight:
    """The first request with this key is still being answered."""


@attrs.frozen
class Reused:
    """The key was used for a different request."""


Repeat = Replay | InFlight | Reused


@attrs.frozen
class KeepAnswer:
    """The answer to keep for ``key``, made from what the enqueue stored, and kept in the
    enqueue's own transaction: once its jobs exist, a repeat can only get their answer."""

    key: str
    answer: Callable[[Sequence[Enqueued]], tuple[int, str]]
    """The kept status and body, from each job's outcome (stored, or a duplicate's id)."""


def judge_repeat(kept: KeptAnswer, request_hash: str) -> Repeat:
    """What a request whose key the store already holds gets."""
    if kept.request_hash != request_hash:
        return Reused()
    if kept.status is None or kept.body is None:
        return InFlight()
    return Replay(kept.status, kept.body)


def stale_before(now: datetime.datetime) -> tuple[datetime.datetime, datetime.datetime]:
    """Keys answered before the first time are forgotten; unanswered ones before the second."""
    return now - KEEP_FOR, now - IN_FLIGHT_FOR


def check_key(key: object) -> str:
    """The key, if usable: 1 to 255 visible ASCII characters; InvalidOptionError otherwise."""
    if (
        not isinstance(key, str)
        or not 0 < len(key) <= MAX_KEY_LENGTH
        or not all(33 <= ord(c) < 127 for c in key)
    ):
        raise InvalidOptionError(
            "Idempotency-Key", f"must be 1 to {MAX_KEY_LENGTH} visible ASCII characters"
        )
    return key
