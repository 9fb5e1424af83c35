"""Periodic jobs: cron expressions (cronsim) and fixed intervals, one job per tick.

Every runner that registered a schedule computes the same ticks, and each
tick is enqueued with a unique key made of the schedule's name and the
tick's time, kept for good: however many processes and hosts reach a tick,
the unique index lets exactly one job in. No leader is elected, so there is
none that can be two.

Missed ticks (nothing ran for a while): only the latest tick missed is run,
once, and only a tick after the schedule was first recorded in the database,
so a first deploy runs nothing from the past.
"""

from __future__ import annotations

import datetime
import math
import re
import zoneinfo
from collections.abc import Iterator

import attrs
from cronsim import CronSim, CronSimError

_SECOND = datetime.timedelta(seconds=1)
_DST_MARGIN = datetime.timedelta(hours=3)
"""Longer than any clock change: where to start stepping so no tick near ``now`` is missed."""


@attrs.frozen(kw_only=True)
class Schedule:
    """One registered schedule: when it ticks, and the job each tick enqueues."""

    name: str
    kind: str
    payload: str
    """The encoded JSON payload every tick's job gets."""
    cron: str | None = None
    every: float | None = None
    timezone: datetime.tzinfo = datetime.UTC
    limit_key: str | None = None
    """The key of the kind's keyed limit for that payload (core/limits.py)."""
    rate_key: str | None = None
    """The key of the kind's keyed rate for that payload."""
    fair_key: str | None = None
    """The key its kind's jobs take turns by, for that payload."""

    def latest_tick(self, now: datetime.datetime) -> datetime.datetime:
        """The last tick at or before ``now``."""
        if self.every is not None:
            period = _microseconds(self.every)
            return _EPOCH + datetime.timedelta(microseconds=_since_epoch(now) // period * period)
        # Reverse iteration finds some tick at or before now, not always the last one: on
        # the repeated hour of a DST fall-back it can skip the first pass. Walking forward
        # from that tick finds the last.
        start = now + _DST_MARGIN if self._clock_changes_near(now) else now
        candidate = next(tick for tick in self._cron_ticks(start, reverse=True) if tick <= now)
        latest = candidate
        for tick in self._ticks_after(candidate):
            if tick > now:
                return latest
            latest = tick
        raise AssertionError("a cron expression always ticks again")  # pragma: no cover

    def next_tick(self, now: datetime.datetime) -> datetime.datetime:
        """The first tick after ``now`` (always after ``latest_tick(now)``)."""
        if self.every is not None:
            period = _microseconds(self.every)
            ticks = _since_epoch(now) // period + 1
            return _EPOCH + datetime.timedelta(microseconds=ticks * period)
        return next(self._ticks_after(now))

    def _ticks_after(self, moment: datetime.datetime) -> Iterator[datetime.datetime]:
        """The cron ticks after ``moment``, in UTC, strictly increasing.

        cronsim steps in local wall time: started inside a repeated hour it can
        yield a tick of the hour's first pass, already past. So it starts a
        margin earlier and every tick not after ``moment`` is passed over.
        """
        last = moment
        start = moment - _DST_MARGIN if self._clock_changes_near(moment) else moment
        for tick in self._cron_ticks(start, reverse=False):
            if tick > last:
                last = tick
                yield tick

    def _clock_changes_near(self, moment: datetime.datetime) -> bool:
        """Whether the zone's offset from UTC changes within ``_DST_MARGIN`` of ``moment``."""
        offsets = {
            (moment + shift).astimezone(self.timezone).utcoffset()
            for shift in (-_DST_MARGIN, datetime.timedelta(0), _DST_MARGIN)
        }
        return len(offsets) > 1

    def _cron_ticks(
        self, start: datetime.datetime, *, reverse: bool
    ) -> Iterator[datetime.datetime]:
        assert self.cron is not None
        # cronsim counts in whole seconds, and reverse iteration starts strictly before.
        begin = start.astimezone(datetime.UTC).replace(microsecond=0)
        if reverse:
            begin += _SECOND
        for tick in CronSim(self.cron, begin.astimezone(self.timezone), reverse=reverse):
            yield tick.astimezone(datetime.UTC)

    def unique_key(self, tick: datetime.datetime) -> str:
        """The key that lets one job per tick in, across every process."""
        return f"{tick_key_prefix(self.name)}{tick.astimezone(datetime.UTC).isoformat()}"

    def stored(self, queue: str) -> StoredSchedule:
        """What a runner records of it at start, so any process can list it."""
        expression = self.cron if self.cron is not None else f"every {_seconds(self.every)}s"
        return StoredSchedule(
            name=self.name,
            kind=self.kind,
            expression=expression,
            timezone=timezone_name(self.timezone),
            queue=queue,
        )


def _seconds(value: float | None) -> str:
    """An interval as written back exactly: ``300``, ``1209601``, ``0.5``."""
    assert value is not None
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def tick_key_prefix(name: str) -> str:
    """What every tick's unique key of the schedule ``name`` starts with."""
    return f"schedule:{name}@"


def tick_of_key(name: str, key: str | None) -> datetime.datetime | None:
    """The tick a unique key of the schedule ``name`` was made for; None for a key that is
    not one (another schedule's whose name starts with ``name@``, or none)."""
    prefix = tick_key_prefix(name)
    if key is None or not key.startswith(prefix) or "@" in key[len(prefix) :]:
        return None
    try:
        return datetime.datetime.fromisoformat(key[len(prefix) :])
    except ValueError:
        return None


@attrs.frozen(kw_only=True)
class StoredSchedule:
    """A schedule as the runners that run it recorded it, as ``GET /api/v1/schedules`` and
    ``jobtable schedules`` list it."""

    name: str
    kind: str
    expression: str
    """Its cron expression (``*/5 * * * *``), or ``every 60s``."""
    timezone: str
    """The time zone its cron expression is read in (``UTC``, ``Europe/Berlin``)."""
    queue: str
    """The queue its jobs go to (its kind's default queue)."""
    queue_paused: bool = False
    last_tick: datetime.datetime | None = None
    """The latest tick whose job is still kept (None: none yet, or pruned)."""
    next_run: datetime.datetime | None = None
    """Its next tick after now: worked out by the core (``next_run``); a store leaves None."""


def next_run(stored: StoredSchedule, now: datetime.datetime) -> datetime.datetime | None:
    """The stored schedule's first tick after ``now``; None when what was stored cannot be
    read (written by another version)."""
    try:
        zone = resolve_timezone(stored.timezone)
        if stored.expression.startswith("every "):
            every = check_every(float(stored.expression.removeprefix("every ").rstrip("s")))
            schedule = Schedule(name=stored.name, kind=stored.kind, payload="", every=every)
        else:
            cron, zone = check_cron(stored.expression, zone)
            schedule = Schedule(
                name=stored.name, kind=stored.kind, payload="", cron=cron, timezone=zone
            )
        return schedule.next_tick(now)
    except ValueError:
        return None


def timezone_name(zone: datetime.tzinfo) -> str:
    """A time zone as ``resolve_timezone`` takes it back."""
    key = getattr(zone, "key", None)
    return str(key) if key else "UTC" if zone in (datetime.UTC, datetime.UTC) else str(zone)


CRON_FIELDS = "minute hour day-of-month month day-of-week"
"""The five fields a cron expression has: cronsim's optional seconds field is refused."""

_NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def check_cron(expr: object, timezone: object) -> tuple[str, datetime.tzinfo]:
    """A usable cron expression and time zone, or ValueError saying what is wrong."""
    zone = resolve_timezone(timezone)
    if not isinstance(expr, str):
        raise ValueError("a cron expression must be a string such as '*/5 * * * *'")
    fields = len(expr.split())
    if fields != 5:
        raise ValueError(f"cron expression {expr!r} is not valid: {_not_five(expr, fields)}")
    try:
        CronSim(expr, datetime.datetime(2026, 1, 1, tzinfo=zone))
    except CronSimError as error:
        raise ValueError(f"cron expression {expr!r} is not valid: {error}") from None
    return expr, zone


def _not_five(expr: str, fields: int) -> str:
    """What to write instead of an expression without five fields."""
    nickname = expr.strip().lower()
    if nickname in _NICKNAMES:
        return f"write the five fields {CRON_FIELDS}; {nickname!r} is {_NICKNAMES[nickname]!r}"
    counted = f"it has {fields} field{'' if fields == 1 else 's'}"
    if fields == 6:
        counted += ", and a seconds field is not supported"
    return f"{counted}; write the five fields {CRON_FIELDS}, such as '*/5 * * * *'"


def check_every(seconds: object) -> float:
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or not 1 <= seconds <= 100 * 365 * 86400
    ):
        raise ValueError("every needs a number of seconds >= 1 and at most a century")
    return float(seconds)


def resolve_timezone(timezone: object) -> datetime.tzinfo:
    if isinstance(timezone, datetime.tzinfo):
        return timezone
    if not isinstance(timezone, str):
        raise ValueError("timezone must be a name such as 'Europe/Berlin' or a tzinfo")
    if timezone.upper() == "UTC":
        return datetime.UTC
    offset = _FIXED_OFFSET.fullmatch(timezone)
    if offset is not None:  # a fixed offset, as timezone_name writes one: UTC+02:00
        sign, hours, minutes = offset.groups()
        delta = datetime.timedelta(hours=int(hours), minutes=int(minutes))
        return datetime.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}") from None


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_FIXED_OFFSET = re.compile(r"UTC([+-])(\d\d):(\d\d)")


def _microseconds(seconds: float) -> int:
    """An interval in whole microseconds: ticks in integers, so no rounding makes a tick
    fall on itself or before the one it follows."""
    return max(1, round(seconds * 1_000_000))


def _since_epoch(moment: datetime.datetime) -> int:
    return (moment - _EPOCH) // datetime.timedelta(microseconds=1)
