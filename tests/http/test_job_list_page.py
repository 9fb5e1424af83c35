"""The dashboard's job list as an operator reads it: search by id or a piece of one, kinds and
queues to pick from, pages both ways, short ids with the whole one at hand, relative times,
and bulk actions from a filtered list, confirmed with their count."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from jobtable.core.builtins import NoopPayload
from tests.http.conftest import log_in
from tests.unit.kinds_for_tests import CountPayload, count


def ids_on(page: str) -> list[str]:
    return re.findall(r'<tr data-job="([^"]+)"', page)


def link(page: str, rel: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" rel="{rel}">', page)
    return None if found is None else found.group(1).replace("&amp;", "&")


def test_a_job_is_found_by_its_id_its_start_or_the_end_the_list_shows(system, client):
    browser = log_in(client)
    ids = [system.runner.builtins.noop.enqueue(NoopPayload()) for _ in range(3)]
    whole = browser.get(client, f"/ui/jobs?id={ids[1].upper()}")
    assert (whole.status_code, whole.headers["Location"]) == (303, f"/ui/jobs/{ids[1]}")
    by_end = browser.get(client, f"/ui/jobs?id={ids[1][-8:]}")
    assert ids_on(by_end.text) == [ids[1]]
    short = f'<a href="/ui/jobs/{ids[1]}" title="{ids[1]}" class="short-id">…{ids[1][-8:]}</a>'
    assert short in by_end.text  # short, the whole id on hover
    assert f'data-copy="{ids[1]}"' in by_end.text
    by_start = browser.get(client, f"/ui/jobs?id={ids[0][:13]}")
    assert set(ids) >= set(ids_on(by_start.text)) >= {ids[0]}
    refused = browser.get(client, "/ui/jobs?id=not-hex!")
    assert refused.status_code == 400
    assert "id: must be a job id, or its start or end" in refused.text


def test_kinds_and_queues_are_offered_and_pages_go_both_ways(system, client):
    browser = log_in(client)
    kind = system.kinds.register("count", count, payload=CountPayload, queue="reports")
    ids = [kind.enqueue(CountPayload()) for _ in range(120)]
    newest_first = list(reversed(ids))
    first = browser.get(client, "/ui/jobs?kind=count")
    assert 'name="kind" value="count" list="known-kinds"' in first.text
    kinds = re.search(r'<datalist id="known-kinds">(.*?)</datalist>', first.text).group(1)
    queues = re.search(r'<datalist id="known-queues">(.*?)</datalist>', first.text).group(1)
    assert kinds == '<option value="count"></option><option value="noop"></option>'
    assert '<option value="reports"></option>' in queues  # the queue of a kind registered here
    assert ids_on(first.text) == newest_first[:50]
    assert link(first.text, "prev") is None
    assert "2 min ago" not in first.text and "just now" in first.text
    system.clock.advance(150)
    second = browser.get(client, link(first.text, "next"))
    assert ids_on(second.text) == newest_first[50:100]
    assert "2 min ago" in second.text
    third = browser.get(client, link(second.text, "next"))
    assert ids_on(third.text) == newest_first[100:]
    assert link(third.text, "next") is None
    back = browser.get(client, link(third.text, "prev"))
    assert ids_on(back.text) == newest_first[50:100]
    top = browser.get(client, link(back.text, "prev"))
    assert ids_on(top.text) == newest_first[:50]
    assert link(top.text, "prev") is None and link(top.text, "next") is not None


def test_a_bulk_retry_from_the_list_is_confirmed_with_its_count_then_done(system, client):
    browser = log_in(client)
    kind = system.kinds.register("count", count, payload=CountPayload)
    system.runner.pause_queue("held")
    ids = [kind.enqueue(CountPayload(), queue="held") for _ in range(7)]
    for job_id in ids:
        system.runner.cancel(job_id)
    listed = browser.get(client, "/ui/jobs?state=cancelled&queue=held")
    assert "Retry every matching job…" in listed.text
    assert "Cancel every matching job…" not in listed.text  # a cancelled job cannot be
    confirm = browser.get(client, "/ui/jobs/bulk?action=retry&state=cancelled&queue=held")
    assert confirm.status_code == 200
    assert 'data-matched="7"' in confirm.text and "Retry 7 jobs</button>" in confirm.text
    assert {system.runner.detail(job_id).state for job_id in ids} == {"cancelled"}
    form = dict(re.findall(r'<input type="hidden" name="([a-z]+)" value="([^"]*)">', confirm.text))
    assert form["through"] == ids[-1] and form["csrf"] == browser.csrf
    late = kind.enqueue(CountPayload(), queue="held")
    system.runner.cancel(late)  # after the count: left alone
    done = browser.post(client, "/ui/jobs/bulk", body=urllib.parse.urlencode(form))
    assert done.status_code == 303, done.text
    assert done.headers["Location"] == "/ui/jobs?state=cancelled&queue=held&bulk=retry&changed=7"
    assert {system.runner.detail(job_id).state for job_id in ids} == {"available"}
    assert system.runner.detail(late).state == "cancelled"
    assert "7 jobs queued again." in browser.get(client, done.headers["Location"]).text
    assert "bulk retry done by=dashboard filter=state=cancelled queue=held matched=7" in (
        system.logs.text
    )


@pytest.mark.parametrize(
    "body",
    ["action=retry&state=cancelled", "csrf=wrong&action=retry&state=cancelled"],
)
def test_a_bulk_action_without_its_csrf_token_changes_nothing(system, client, body):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    system.runner.cancel(job_id)
    refused = browser.post(client, "/ui/jobs/bulk", body=body)
    assert refused.status_code == 403
    assert system.runner.detail(job_id).state == "cancelled"


@pytest.mark.parametrize(
    "query",
    ["action=retry", "action=cancel&state=failed", "action=drop&state=failed", "action=retry&id=a"],
)
def test_a_bulk_action_needs_a_filter_it_applies_to(system, client, query):
    browser = log_in(client)
    assert browser.get(client, f"/ui/jobs/bulk?{query}").status_code == 400
