"""Schedules any process can list: ``GET /api/v1/schedules`` and the dashboard's page, from
what each runner records at start; one log line per schedule at start."""

from __future__ import annotations

import datetime
import zoneinfo

from tests.http.conftest import AUTH, log_in
from tests.unit.kinds_for_tests import CountPayload, count


def register_schedules(system) -> None:
    counter = system.kinds.register("count", count, payload=CountPayload, queue="reports")
    system.kinds.cron(
        "30 2 * * *", counter, CountPayload(steps=1), name="nightly", timezone="Europe/Berlin"
    )
    system.kinds.every(300, counter, CountPayload(steps=2), name="five-minutes")


def test_the_schedules_a_runner_runs_are_listed_with_their_next_run(system, client):
    register_schedules(system)
    system.start()
    assert "schedule name=nightly kind=count expression='30 2 * * *'" in system.logs.text
    assert "schedule name=five-minutes kind=count expression='every 300s'" in system.logs.text
    client.simulate_post("/api/v1/queues/reports/pause", headers=AUTH)
    answer = client.simulate_get("/api/v1/schedules", headers=AUTH)
    assert answer.status_code == 200, answer.text
    listed = {item["name"]: item for item in answer.json["schedules"]}
    assert list(listed) == ["five-minutes", "nightly"]
    nightly = listed["nightly"]
    assert {k: v for k, v in nightly.items() if k not in ("next_run", "last_tick")} == {
        "name": "nightly",
        "kind": "count",
        "expression": "30 2 * * *",
        "timezone": "Europe/Berlin",
        "queue": "reports",
        "queue_paused": True,
    }
    now = system.clock.now()
    next_run = datetime.datetime.fromisoformat(nightly["next_run"])
    assert now < next_run <= now + datetime.timedelta(days=1)
    assert next_run.astimezone(zoneinfo.ZoneInfo("Europe/Berlin")).time() == datetime.time(2, 30)
    five = datetime.datetime.fromisoformat(listed["five-minutes"]["next_run"])
    assert five.timestamp() % 300 == 0 and now < five <= now + datetime.timedelta(seconds=300)
    assert client.simulate_get("/api/v1/schedules").status_code == 401


def test_the_dashboard_lists_the_schedules(system, client):
    register_schedules(system)
    system.start()
    browser = log_in(client)
    page = browser.get(client, "/ui/schedules")
    assert page.status_code == 200
    assert "<code>30 2 * * *</code>" in page.text and "Europe/Berlin" in page.text
    assert "<code>every 300s</code>" in page.text
    assert 'href="/ui/schedules"' in browser.get(client, "/ui/").text  # in the navigation
