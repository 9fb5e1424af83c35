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
import zoneinfo

import attrs
from cronsim import CronSim, CronSimError

_SECOND = datetime.timedelta(seconds=1)


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

    def latest_tick(self, now: datetime.datetime) -> datetime.datetime:
        """The last tick at or before ``now``."""
        if self.every is not None:
            period = _microseconds(self.every)
            return _EPOCH + datetime.timedelta(microseconds=_since_epoch(now) // period * period)
        assert self.cron is not None
        # cronsim counts in whole seconds, and reverse iteration starts strictly before.
        # The step is taken in UTC, then converted: local arithmetic would lose which pass
        # of a repeated hour (a DST fall-back) it is in.
        start = (now.astimezone(datetime.UTC).replace(microsecond=0) + _SECOND).astimezone(
            self.timezone
        )
        return next(CronSim(self.cron, start, reverse=True)).astimezone(datetime.UTC)

    def next_tick(self, now: datetime.datetime) -> datetime.datetime:
        """The first tick after ``now`` (always after ``latest_tick(now)``)."""
        if self.every is not None:
            period = _microseconds(self.every)
            ticks = _since_epoch(now) // period + 1
            return _EPOCH + datetime.timedelta(microseconds=ticks * period)
        assert self.cron is not None
        local = now.astimezone(self.timezone)
        return next(CronSim(self.cron, local)).astimezone(datetime.UTC)

    def unique_key(self, tick: datetime.datetime) -> str:
        """The key that lets one job per tick in, across every process."""
        return f"schedule:{self.name}@{tick.astimezone(datetime.UTC).isoformat()}"


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
    try:
        return zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}") from None


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _microseconds(seconds: float) -> int:
    """An interval in whole microseconds: ticks in integers, so no rounding makes a tick
    fall on itself or before the one it follows."""
    return max(1, round(seconds * 1_000_000))


def _since_epoch(moment: datetime.datetime) -> int:
    return (moment - _EPOCH) // datetime.timedelta(microseconds=1)
