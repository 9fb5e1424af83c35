"""Job ids: UUIDv7 strings that sort by creation time ("oldest first" is ``ORDER BY id``)."""

from __future__ import annotations

import datetime
import os
import threading

from jobtable.core.text import plain

_RANDOM_BITS = 74  # 12 bits of rand_a plus 62 bits of rand_b
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1
_RANDOM_BYTES = 10  # 80 bits read, 74 kept
_POOL_IDS = 256
"""Ids' worth of random bytes read from the OS at once: one read, not one a job."""


class _RandomPool:
    """Random bits from ``os.urandom`` (as ``secrets`` reads them), read ahead in blocks.

    A forked child drops the block it inherited: it must never make the
    parent's ids.
    """

    def __init__(self) -> None:
        self._block = b""
        self._at = 0

    def bits(self) -> int:
        """74 random bits; called under the generator's lock."""
        at = self._at
        if at >= len(self._block):
            self._block, at = os.urandom(_RANDOM_BYTES * _POOL_IDS), 0
        self._at = at + _RANDOM_BYTES
        return int.from_bytes(self._block[at : at + _RANDOM_BYTES], "big") & _RANDOM_MASK

    def drop(self) -> None:
        self._block, self._at = b"", 0


_POOL = _RandomPool()
os.register_at_fork(after_in_child=_POOL.drop)


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
        with self._lock:
            candidate = (unix_ms << _RANDOM_BITS) | _POOL.bits()
            if candidate <= self._last:
                candidate = self._last + 1
            self._last = candidate
        return _to_uuid7(candidate)


def unix_ms(moment: datetime.datetime) -> int:
    """``moment`` in whole milliseconds since the Unix epoch, as ``next_id`` takes it."""
    return int(moment.timestamp() * 1000)


def _to_uuid7(value: int) -> str:
    """The UUIDv7 text of ``(unix_ms << 74) | random``, as ``str(uuid.UUID(...))`` spells it."""
    unix_ms = value >> _RANDOM_BITS
    random = value & _RANDOM_MASK
    rand_a = random >> 62
    rand_b = random & ((1 << 62) - 1)
    as_int = (unix_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    text = f"{as_int:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def could_exist(job_id: object) -> bool:
    """Whether any job could have ``job_id``: ours are UUIDv7s, one migrated from the
    reference any plain text (``text.plain``). Any other is no job's, and is looked up in
    no store (some would refuse it)."""
    return plain(job_id)
