"""Job ids: UUIDv7 strings that sort by creation time ("oldest first" is ``ORDER BY id``)."""

from __future__ import annotations

import datetime
import secrets
import threading
import uuid

from jobtable.core.text import plain

_RANDOM_BITS = 74  # 12 bits of rand_a plus 62 bits of rand_b
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1


class JobIdGenerator:
    """Makes UUIDv7 ids, strictly increasing within one process.

    Ids must sort as they were made, even when two are made in the same
    millisecond or the clock steps back: the generator keeps the last id it
    issued and never issues one that sorts at or before it (RFC 9562, section
    6.2, method 3: the random part is bumped).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0  # (unix_ms << 74) | random, of the last id issued

    def next_id(self, unix_ms: int) -> str:
        """Return a new id for a job created at ``unix_ms`` milliseconds."""
        candidate = (unix_ms << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
        with self._lock:
            if candidate <= self._last:
                candidate = self._last + 1
            self._last = candidate
        return str(_to_uuid7(candidate))


def unix_ms(moment: datetime.datetime) -> int:
    """``moment`` in whole milliseconds since the Unix epoch, as ``next_id`` takes it."""
    return int(moment.timestamp() * 1000)


def _to_uuid7(value: int) -> uuid.UUID:
    unix_ms = value >> _RANDOM_BITS
    random = value & _RANDOM_MASK
    rand_a = random >> 62
    rand_b = random & ((1 << 62) - 1)
    as_int = (unix_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return uuid.UUID(int=as_int)


def could_exist(job_id: object) -> bool:
    """Whether any job could have ``job_id``: ours are UUIDv7s, one migrated from the
    reference any plain text (``text.plain``). Any other is no job's, and is looked up in
    no store (some would refuse it)."""
    return plain(job_id)
