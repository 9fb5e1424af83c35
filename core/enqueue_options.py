"""What an enqueue may say besides the payload, checked before anything is stored.

The same checks serve Python, HTTP and the CLI, so each refuses the same
input with the same words: a naive datetime, a negative delay, a priority
outside 0-9, a queue name that could not be typed on a command line, a
unique key or a name no store could keep (``text``).
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

import attrs

from jobtable.core.errors import InvalidOptionError as InvalidOptionError  # re-exported
from jobtable.core.jobs import PRIORITIES
from jobtable.core.text import MAX_TEXT, PLAIN_TEXT, plain

QUEUE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_UNIQUE_KEY = MAX_TEXT
MAX_SECONDS = 100 * 365 * 86400
"""A century: the longest delay, timeout, snooze or backoff anyone means (longer ones
would overflow a datetime)."""
LATEST_RUN_AT = datetime.datetime(9000, 1, 1, tzinfo=datetime.UTC)


@attrs.frozen(kw_only=True)
class EnqueueOptions:
    """Per-job overrides of the kind's defaults; None leaves the default."""

    run_at: datetime.datetime | None = None
    delay: float | None = None
    queue: str | None = None
    priority: int | None = None
    timeout: float | None = None
    unique_key: str | None = None

    def check(self, *, now: datetime.datetime | None = None) -> EnqueueOptions:
        """Self, when every option is usable; InvalidOptionError otherwise.

        With ``now``, a ``run_at`` more than a century after it is refused too.
        """
        if self.run_at is not None and self.delay is not None:
            raise InvalidOptionError("run_at", "give run_at or delay, not both")
        if self.run_at is not None:
            check_run_at(self.run_at, now=now)
        if self.delay is not None:
            seconds(self.delay, "delay", allow_zero=True)
        if self.queue is not None:
            check_queue(self.queue)
        if self.priority is not None:
            check_priority(self.priority)
        if self.timeout is not None:
            seconds(self.timeout, "timeout", allow_zero=False)
        if self.unique_key is not None:
            check_text(self.unique_key, "unique_key")
        return self

    def due(self, now: datetime.datetime) -> datetime.datetime | None:
        """When the job is due: ``run_at``, ``now + delay``, or None (at once).

        InvalidOptionError for a ``run_at`` more than a century after ``now``.
        """
        if self.run_at is not None:
            return check_run_at(self.run_at, now=now)
        if self.delay:
            return now + datetime.timedelta(seconds=self.delay)
        return None


def check_run_at(value: object, *, now: datetime.datetime | None = None) -> datetime.datetime:
    """A usable ``run_at``: aware, and at most a century after ``now`` (when given)."""
    if not isinstance(value, datetime.datetime):
        raise InvalidOptionError("run_at", "must be a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidOptionError("run_at", "must be timezone-aware (say which zone, e.g. UTC)")
    try:
        in_utc = value.astimezone(datetime.UTC)
    except OverflowError:
        in_utc = LATEST_RUN_AT
    if in_utc >= LATEST_RUN_AT:
        raise InvalidOptionError("run_at", "must be before the year 9000")
    if now is not None and in_utc > now + datetime.timedelta(seconds=MAX_SECONDS):
        raise InvalidOptionError("run_at", "must be at most a century from now")
    return value


def check_text(value: object, field: str) -> str:
    """A unique key, a kind's name or another string a store keeps, if it can keep it."""
    if not plain(value):
        raise InvalidOptionError(field, f"must be a string of {PLAIN_TEXT}")
    return value


def check_queue(value: object) -> str:
    if not isinstance(value, str) or not QUEUE_NAME.fullmatch(value):
        raise InvalidOptionError(
            "queue",
            "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        )
    return value


def check_priority(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in PRIORITIES:
        raise InvalidOptionError("priority", "must be a whole number from 0 (first) to 9 (last)")
    return value


def seconds(value: object, field: str, *, allow_zero: bool) -> float:
    """A number of seconds within a century (refusing what would overflow a datetime)."""
    number = None
    if not isinstance(value, bool) and isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
    if (
        number is None
        or not math.isfinite(number)
        or number < 0
        or number > MAX_SECONDS
        or (number == 0 and not allow_zero)
    ):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidOptionError(
            field, f"must be a number of seconds {bound} and at most {MAX_SECONDS} (a century)"
        )
    return number


@attrs.frozen(kw_only=True)
class Unique:
    """A kind's rule for unique jobs: at most one job per key within a window.

    ``fields``: payload fields whose values make the key when the enqueue
    gives none (empty: only an explicit ``unique_key`` makes one).
    ``period``: seconds; the key holds for the period it falls in, whatever
    becomes of the job. None: the key holds while the job is queued or
    running, and is let go when it finishes.
    """

    fields: tuple[str, ...] = ()
    period: float | None = None

    def key(
        self, explicit: str | None, payload_json: str, now: datetime.datetime
    ) -> tuple[str | None, bool]:
        """The stored key and whether it is let go when the job finishes."""
        key = explicit
        if key is None and self.fields:
            payload: Any = json.loads(payload_json)
            values = [
                payload.get(field) if isinstance(payload, dict) else None for field in self.fields
            ]
            key = json.dumps(values, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        if key is None:
            return None, True
        if self.period is None:
            return key, True
        bucket = math.floor(now.timestamp() / self.period)
        return f"{key}@{bucket}", False

    def held_until(self, now: datetime.datetime) -> datetime.datetime | None:
        """When the period ``now`` falls in ends: no enqueue makes its key after that.

        None for a key held while the job is active (it goes when the job ends).
        """
        if self.period is None:
            return None
        bucket = math.floor(now.timestamp() / self.period)
        return datetime.datetime.fromtimestamp((bucket + 1) * self.period, tz=datetime.UTC)


WHILE_ACTIVE = Unique()
"""The window of an explicit key on a kind without a unique rule: while queued or running."""
