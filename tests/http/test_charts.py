"""The overview's last hour: charts drawn as SVG from the per-minute rollup, their numbers as
JSON, each kind's hour, the oldest waiting job per queue, and counts that open their list."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ElementTree

from jobtable.core.minutes import MinuteCounts, bucket_of, minute_of
from tests.http.conftest import log_in
from tests.unit.kinds_for_tests import CountPayload, count

SVG = "{http://www.w3.org/2000/svg}"


def add_minutes(system) -> datetime.datetime:
    now = system.clock.now()
    minute = minute_of(now)
    system.store.add_minutes(
        [
            MinuteCounts(minute=minute, queue="mail", kind="send", succeeded=7, failed=2,
                         waits=((bucket_of(0.02), 8), (bucket_of(3), 1))),
            MinuteCounts(minute=minute - datetime.timedelta(minutes=3), queue="reports",
                         kind="build", succeeded=4, waits=((bucket_of(40), 4),)),
            MinuteCounts(minute=minute - datetime.timedelta(minutes=90), queue="mail",
                         kind="send", succeeded=500),  # past the hour
        ],
        now=now,
    )  # fmt: skip
    return minute


def titles(svg: str) -> list[str]:
    root = ElementTree.fromstring(svg)
    return [element.text or "" for element in root.iter(f"{SVG}title")]


def test_the_charts_draw_the_last_hour_for_every_queue_or_the_one_picked(system, client):
    browser = log_in(client)
    minute = add_minutes(system)
    answer = browser.get(client, "/ui/charts/throughput.svg")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "image/svg+xml; charset=utf-8"
    shown = titles(answer.text)
    assert shown[0] == "throughput over the last hour, every queue and kind"
    assert f"{minute:%H:%M} UTC: 7 succeeded, 2 failed" in shown
    earlier = minute - datetime.timedelta(minutes=3)
    assert f"{earlier:%H:%M} UTC: 4 succeeded, 0 failed" in shown
    assert len([t for t in shown if " succeeded, " in t]) == 60
    only = titles(browser.get(client, "/ui/charts/throughput.svg?queue=reports").text)
    assert f"{minute:%H:%M} UTC: 0 succeeded, 0 failed" in only
    assert only[0] == "throughput over the last hour, queue reports"
    wait = titles(browser.get(client, "/ui/charts/wait.svg?kind=send").text)
    assert f"{minute:%H:%M} UTC: p50 wait 25 ms" in wait
    assert f"{minute:%H:%M} UTC: p95 wait 5 s" in wait
    assert browser.get(client, "/ui/charts/pie.svg").status_code == 404
    assert client.simulate_get("/ui/charts/wait.svg").status_code == 401


def test_the_chart_data_and_the_kinds_of_the_hour(system, client):
    browser = log_in(client)
    minute = add_minutes(system)
    data = browser.get(client, "/ui/data/charts?queue=mail").json
    assert data["queue"] == "mail" and len(data["minutes"]) == 60
    assert data["minutes"][-1] == {
        "minute": minute.isoformat(), "succeeded": 7, "failed": 2,
        "started": 9, "wait_p50": 0.025, "wait_p95": 5.0,
    }  # fmt: skip
    assert data["kinds"] == [
        {"kind": "send", "succeeded": 7, "failed": 2, "wait_p50": 0.025, "wait_p95": 5.0}
    ]
    page = browser.get(client, "/ui/")
    assert '<tr data-kind="build">' in page.text and '<tr data-kind="send">' in page.text
    assert 'src="/ui/charts/throughput.svg"' in page.text
    picked = browser.get(client, "/ui/?kind=build")
    assert 'src="/ui/charts/wait.svg?kind=build"' in picked.text
    assert "Last hour, kind build" in picked.text


def test_queue_counts_link_to_their_list_and_show_the_oldest_waiting_job(system, client):
    browser = log_in(client)
    kind = system.kinds.register("count", count, payload=CountPayload)
    kind.enqueue(CountPayload(), queue="mail")
    system.clock.advance(125)
    kind.enqueue(CountPayload(), queue="mail")
    page = browser.get(client, "/ui/").text
    assert '<a href="/ui/jobs?queue=mail&amp;state=available" class="count">2</a>' in page
    assert '<a href="/ui/jobs?state=available" class="card state-card state-available">' in page
    assert '<td data-oldest="*">2 min</td>' in page
    assert browser.get(client, "/ui/data/overview").json["oldest_waiting"] == {"mail": 125.0}
