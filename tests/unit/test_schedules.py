"""Periodic jobs: ticks computed alike everywhere, each enqueued exactly once across
runners, and missed ticks run once for the latest only, never from before a first deploy."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.core import RegistrationError, Status
from jobtable.core.errors import StoreUnavailableError
from jobtable.core.scheduler import LONGEST_WAIT
from jobtable.core.schedules import Schedule, next_run, resolve_timezone, tick_of_key
from tests.unit.kinds_for_tests import CountPayload, count

UTC = datetime.UTC


def at(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


def test_interval_ticks_fall_on_multiples_of_the_interval():
    every = Schedule(name="s", kind="k", payload="{}", every=30)
    now = at("2026-01-01T00:01:10+00:00")
    assert every.latest_tick(now) == at("2026-01-01T00:01:00+00:00")
    assert every.next_tick(now) == at("2026-01-01T00:01:30+00:00")
    on_tick = at("2026-01-01T00:01:30+00:00")
    assert (every.latest_tick(on_tick), every.next_tick(on_tick)) == (
        on_tick, at("2026-01-01T00:02:00+00:00"),
    )  # fmt: skip


def test_cron_ticks_follow_the_expression_in_its_time_zone():
    berlin = Schedule(
        name="s", kind="k", payload="{}", cron="0 9 * * *",
        timezone=resolve_timezone("Europe/Berlin"),
    )  # fmt: skip
    now = at("2026-07-01T12:00:00+00:00")  # 14:00 in Berlin (summer time)
    assert berlin.latest_tick(now) == at("2026-07-01T07:00:00+00:00")
    assert berlin.next_tick(now) == at("2026-07-02T07:00:00+00:00")
    winter = at("2026-12-01T12:00:00+00:00")
    assert berlin.next_tick(winter) == at("2026-12-02T08:00:00+00:00")
    five = Schedule(name="s", kind="k", payload="{}", cron="*/5 * * * *")
    assert five.latest_tick(at("2026-01-01T00:10:00+00:00")) == at("2026-01-01T00:10:00+00:00")
    assert five.latest_tick(at("2026-01-01T00:09:59.9+00:00")) == at("2026-01-01T00:05:00+00:00")


def test_bad_schedules_are_refused_at_registration(make_system):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(RegistrationError, match="not valid"):
        system.kinds.cron("every day", kind, CountPayload())
    with pytest.raises(RegistrationError, match="unknown time zone"):
        system.kinds.cron("* * * * *", kind, CountPayload(), timezone="Mars/Olympus")
    with pytest.raises(RegistrationError, match=">= 1"):
        system.kinds.every(0, kind, CountPayload())
    system.kinds.every(5, kind, CountPayload())
    with pytest.raises(RegistrationError, match="has this name already"):
        system.kinds.every(5, kind, CountPayload())
    other = make_system()
    with pytest.raises(RegistrationError, match="register the kind here first"):
        other.kinds.every(5, kind, CountPayload())


FIVE_FIELDS = "write the five fields minute hour day-of-month month day-of-week"


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("* * * * * *", "it has 6 fields, and a seconds field is not supported"),
        ("0 0 9 * * mon", "it has 6 fields"),
        ("*/5 * * *", "it has 4 fields"),
        ("", "it has 0 fields"),
        ("@daily", "'@daily' is '0 0 * * *'"),
        ("@HOURLY", "'@hourly' is '0 * * * *'"),
        ("@reboot", "it has 1 field;"),
    ],
)
def test_a_cron_expression_without_the_five_documented_fields_is_refused(make_system, expr, says):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    with pytest.raises(RegistrationError) as refused:
        system.kinds.cron(expr, kind, CountPayload())
    message = str(refused.value)
    assert f"cron expression {expr!r} is not valid" in message
    assert says in message and FIVE_FIELDS in message
    assert system.kinds.schedules() == []


@pytest.mark.parametrize(
    ("expr", "now", "next_tick"),
    [
        # Names for months and days, any case, as Debian cron takes them.
        ("0 9 * jan,jul MON", "2026-01-01T00:00:00+00:00", "2026-01-05T09:00:00+00:00"),
        # cronsim's extensions, kept and documented: the last day of the month (L), the last
        # weekday of it (LW), a month's last Friday (5L), its second Monday (MON#2).
        ("0 9 L * *", "2026-02-01T00:00:00+00:00", "2026-02-28T09:00:00+00:00"),
        ("0 9 LW * *", "2026-05-01T00:00:00+00:00", "2026-05-29T09:00:00+00:00"),
        ("0 9 * * 5L", "2026-01-01T00:00:00+00:00", "2026-01-30T09:00:00+00:00"),
        ("0 9 * * MON#2", "2026-01-01T00:00:00+00:00", "2026-01-12T09:00:00+00:00"),
    ],
)
def test_the_documented_cron_forms_are_accepted_and_tick_as_the_readme_says(
    make_system, expr, now, next_tick
):
    system = make_system()
    kind = system.kinds.register("count", count, payload=CountPayload)
    schedule = system.kinds.cron(expr, kind, CountPayload())
    assert schedule.next_tick(at(now)) == at(next_tick)


def jobs_of(store, kind: str) -> list:
    inner = getattr(store, "inner", store)
    return [row for row in inner._rows.values() if row.kind == kind]


def test_each_tick_is_enqueued_once_across_two_runners(make_system):
    clock = FakeClock()
    clock.advance(1)  # between ticks: a first deploy runs nothing
    systems = [make_system(clock=clock) for _ in range(2)]
    for system in systems:
        kind = system.kinds.register("count", count, payload=CountPayload)
        system.kinds.every(10, kind, CountPayload(steps=1))
        system.start()
    store = systems[0].store
    for tick in range(1, 4):
        clock.wait_for_sleeping(lambda sleeping: sleeping == [9.0, 9.0])
        clock.advance(9)
        store.wait_until(lambda tick=tick: len(jobs_of(store, "count")) >= tick)
        clock.advance(1)  # off the tick again
        assert len(jobs_of(store, "count")) == tick
    for row in jobs_of(systems[0].store, "count"):
        systems[0].wait_for(row.id)
    assert sorted(row.run_at for row in jobs_of(systems[0].store, "count")) == [
        "2026-01-01T00:00:10.000000+00:00",
        "2026-01-01T00:00:20.000000+00:00",
        "2026-01-01T00:00:30.000000+00:00",
    ]


def test_a_tick_whose_enqueue_fails_is_tried_again_a_second_later_and_runs_once(make_system):
    clock = FakeClock()
    clock.advance(1)
    system = make_system(clock=clock)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.kinds.every(10, kind, CountPayload(steps=1), name="report")
    store = system.store
    real_create = store.create
    failures = [StoreUnavailableError("database unavailable")]

    def create(job, *, now, keep=None):
        if failures:
            raise failures.pop()
        return real_create(job, now=now, keep=keep)

    store.create = create
    system.start()
    clock.wait_for_sleeping(lambda sleeping: sleeping == [9.0])
    clock.advance(9)  # the tick at 00:00:10, whose enqueue fails
    clock.wait_for_sleeping(lambda sleeping: sleeping == [1.0])
    assert "enqueue a scheduled tick failed; retrying schedule=report" in system.logs.text
    assert jobs_of(store, "count") == []
    clock.advance(1)
    store.wait_until(lambda: jobs_of(store, "count") != [])
    (row,) = jobs_of(store, "count")
    assert row.run_at == "2026-01-01T00:00:10.000000+00:00"
    assert system.wait_for(row.id).status is Status.SUCCEEDED
    assert clock.wait_for_sleeping(lambda sleeping: sleeping == [9.0])  # then the next tick
    assert len(jobs_of(store, "count")) == 1


def test_after_an_outage_only_the_latest_missed_tick_runs(make_system):
    clock = FakeClock()
    clock.advance(1)
    first = make_system(clock=clock)
    kind = first.kinds.register("count", count, payload=CountPayload)
    first.kinds.every(10, kind, CountPayload(), name="report")
    first.start()
    first.stop()  # recorded the schedule at 00:00:01; nothing ran since
    clock.advance(95)  # ticks at 10, 20, ... 90 missed
    second = make_system(clock=clock)
    kind = second.kinds.register("count", count, payload=CountPayload)
    second.kinds.every(10, kind, CountPayload(), name="report")
    second.start()
    second.store.wait_until(lambda: jobs_of(second.store, "count") != [])
    (row,) = jobs_of(second.store, "count")
    assert row.run_at == "2026-01-01T00:01:30.000000+00:00"
    assert second.wait_for(row.id).status is Status.SUCCEEDED


def test_a_first_deploy_runs_nothing_from_the_past(make_system):
    clock = FakeClock()
    clock.advance(95)
    system = make_system(clock=clock)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.kinds.cron("* * * * *", kind, CountPayload())
    system.start()
    assert clock.wait_for_sleepers(1) == [25.0]  # the scheduler looked, and waits for 00:02
    assert jobs_of(system.store, "count") == []


def test_cron_keeps_both_passes_of_a_repeated_hour():
    """Europe/Berlin falls back at 01:00 UTC on 2026-10-25: 02:00-03:00 local comes twice."""
    berlin = Schedule(
        name="s", kind="k", payload="{}", cron="*/15 * * * *",
        timezone=resolve_timezone("Europe/Berlin"),
    )  # fmt: skip
    second_pass = at("2026-10-25T01:00:00+00:00")  # 02:00 CET, the hour again
    assert berlin.latest_tick(second_pass) == second_pass
    assert berlin.latest_tick(at("2026-10-25T01:20:00+00:00")) == at("2026-10-25T01:15:00+00:00")
    assert berlin.next_tick(at("2026-10-25T00:50:00+00:00")) == second_pass


@pytest.mark.parametrize("every", [1.1, 0.3, 7.7, 3600])
def test_an_interval_tick_never_falls_on_itself(every):
    schedule = Schedule(name="s", kind="k", payload="{}", every=every)
    moment = at("2026-01-01T00:00:00+00:00")
    for _ in range(200):
        latest = schedule.latest_tick(moment)
        following = schedule.next_tick(moment)
        assert latest <= moment < following
        assert schedule.latest_tick(following) == following
        moment = following


ZONES_WITH_CLOCK_CHANGES = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",
    "Australia/Lord_Howe",
]
CRONS = ["30 2 * * *", "*/15 * * * *", "0 * * * *", "45 1,2,3 * * 0"]


def clock_changes(zone: datetime.tzinfo, year: int) -> list[datetime.datetime]:
    """The moments (to the half hour, in UTC) the zone's offset changes in ``year``."""
    moment = datetime.datetime(year, 1, 1, tzinfo=UTC)
    offset, changes = moment.astimezone(zone).utcoffset(), []
    while moment.year == year:
        moment += datetime.timedelta(minutes=30)
        if moment.astimezone(zone).utcoffset() != offset:
            offset = moment.astimezone(zone).utcoffset()
            changes.append(moment)
    return changes


@pytest.mark.parametrize("zone_name", ZONES_WITH_CLOCK_CHANGES)
def test_cron_ticks_bracket_now_through_both_clock_changes(zone_name):
    """At any moment the latest tick is at or before now and the next one after it, the
    next one follows the latest, and each is a tick: through both changes of the year."""
    zone = resolve_timezone(zone_name)
    changes = clock_changes(zone, 2025)
    assert len(changes) == 2
    for expression in CRONS:
        schedule = Schedule(name="s", kind="k", payload="{}", cron=expression, timezone=zone)
        for change in changes:
            moment = change - datetime.timedelta(hours=4)
            while moment < change + datetime.timedelta(hours=4):
                latest, following = schedule.latest_tick(moment), schedule.next_tick(moment)
                where = (zone_name, expression, moment)
                assert latest <= moment < following, where
                assert schedule.next_tick(latest) == following, where
                assert schedule.latest_tick(following) == following, where
                moment += datetime.timedelta(minutes=13)


def test_a_tick_in_the_repeated_hour_is_found_on_its_first_pass():
    """02:30 in Berlin on 2025-10-26 ticks once, at 00:30 UTC (summer time): at 01:05 UTC,
    in the hour's second pass, that was the latest tick and the next is the day after."""
    berlin = Schedule(
        name="s", kind="k", payload="{}", cron="30 2 * * *",
        timezone=resolve_timezone("Europe/Berlin"),
    )  # fmt: skip
    now = at("2025-10-26T01:05:00+00:00")
    assert berlin.latest_tick(now) == at("2025-10-26T00:30:00+00:00")
    assert berlin.next_tick(now) == at("2025-10-27T01:30:00+00:00")


def berlin_at_half_past_two(system):
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.kinds.cron("30 2 * * *", kind, CountPayload(), timezone="Europe/Berlin", name="nightly")


def test_a_first_deploy_in_the_repeated_hour_waits_for_the_next_tick(make_system):
    clock = FakeClock(at("2025-10-26T01:05:00+00:00"))
    system = make_system(clock=clock)
    berlin_at_half_past_two(system)
    calls = count_creates(system.store)
    system.start()
    until_tomorrow = (at("2025-10-27T01:30:00+00:00") - clock.now()).total_seconds()
    assert clock.wait_for_sleepers(1) == [LONGEST_WAIT]  # one look, then a wait (bounded)
    clock.advance(LONGEST_WAIT)  # it looks again, and waits on for the rest of the way
    assert clock.wait_for_sleepers(1) == [min(LONGEST_WAIT, until_tomorrow - LONGEST_WAIT)]
    assert jobs_of(system.store, "count") == []
    assert calls == []


def count_creates(store) -> list[object]:
    """Every ``create`` the store is asked for, in order (the scheduler enqueues ticks so)."""
    calls: list[object] = []
    real_create = store.create

    def create(job, **arguments):
        calls.append(job.run_at)
        return real_create(job, **arguments)

    store.create = create
    return calls


def test_a_restart_in_the_repeated_hour_runs_no_tick_twice_even_once_pruned(make_system):
    clock = FakeClock(at("2025-10-24T12:00:00+00:00"))
    first = make_system(clock=clock)
    berlin_at_half_past_two(first)
    first.start()
    for tick in ("2025-10-25T00:30:00+00:00", "2025-10-26T00:30:00+00:00"):
        clock.wait_for_sleepers(1)
        clock.advance((at(tick) - clock.now()).total_seconds())
        first.store.wait_until(
            lambda tick=tick: any(
                row.run_at.startswith(tick[:16]) for row in jobs_of(first.store, "count")
            )
        )
    for row in jobs_of(first.store, "count"):
        first.wait_for(row.id)
    first.stop()
    clock.advance((at("2025-10-26T01:05:00+00:00") - clock.now()).total_seconds())
    yesterday = min(jobs_of(first.store, "count"), key=lambda row: row.run_at)
    del first.store.inner._rows[yesterday.id]  # pruned: its key was kept only until today's tick

    second = make_system(clock=clock)
    berlin_at_half_past_two(second)
    calls = count_creates(second.store)
    second.start()
    assert clock.wait_for_sleepers(1) == [LONGEST_WAIT]
    clock.advance(LONGEST_WAIT)
    assert clock.wait_for_sleepers(1) == [LONGEST_WAIT]
    assert [str(run_at) for run_at in calls] == ["2025-10-26 00:30:00+00:00"]  # a duplicate
    assert len(jobs_of(second.store, "count")) == 1


@pytest.mark.parametrize(
    ("given", "expression"),
    [
        ({"every": 300.0}, "every 300s"),
        ({"every": 1_209_601.0}, "every 1209601s"),  # past six significant digits
        ({"every": 100_000.5}, "every 100000.5s"),
        ({"cron": "0 3 * * *", "timezone": datetime.timezone(datetime.timedelta(hours=2))}, None),
        ({"cron": "0 3 * * *", "timezone": zoneinfo.ZoneInfo("Europe/Berlin")}, None),
    ],
)
def test_a_listed_schedules_next_run_is_its_next_tick(given, expression):
    schedule = Schedule(name="s", kind="k", payload="{}", **given)
    stored = schedule.stored("default")
    if expression is not None:
        assert stored.expression == expression
    now = datetime.datetime(2026, 3, 29, 0, 30, tzinfo=datetime.UTC)
    assert next_run(stored, now) == schedule.next_tick(now)


def test_a_tick_is_read_from_its_key_and_never_from_another_schedules():
    tick = datetime.datetime(2026, 1, 1, 3, tzinfo=datetime.UTC)
    key = Schedule(name="nightly", kind="k", payload="{}", cron="0 3 * * *").unique_key(tick)
    assert tick_of_key("nightly", key) == tick
    assert tick_of_key("nightly", f"schedule:nightly@eu@{tick.isoformat()}") is None
    assert tick_of_key("nightly", None) is None and tick_of_key("nightly", "other") is None
