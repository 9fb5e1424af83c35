"""The dashboard over HTTP, without a browser: its cookie, its CSRF checks, its escaping.

The browser itself is driven in tests/e2e/test_dashboard_browser.py.
"""

from __future__ import annotations

import datetime
import email.utils
import re

import falcon.testing
import pytest

from jobtable.core import Limit, NoopPayload, Rate
from jobtable.core.batch import Batch
from jobtable.core.builtins import NoopResult
from jobtable.core.limits import QueueLimit
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.ui.overview import POLL_SECONDS, SHARE_FACTOR, OverviewReads
from jobtable.entrypoints.ui.session import SessionKeys
from tests.http.conftest import FORM, TOKEN, log_in
from tests.http.test_metrics import export
from tests.support.markup_kind import MARKUP_KIND, SCRIPT, register_markup_kind
from tests.support.states import states


def set_cookie(result) -> str:
    (header,) = [value for name, value in result.headers.items() if name.lower() == "set-cookie"]
    return header


def cookie_attributes(header: str) -> dict[str, str]:
    _, *parts = [part.strip() for part in header.split(";")]
    return {name.lower(): value for name, _, value in (part.partition("=") for part in parts)}


# -- logging in and out ---------------------------------------------------------


def test_login_sets_an_httponly_strict_cookie_scoped_to_the_dashboard_for_twelve_hours(client):
    answer = client.simulate_post(
        "/ui/login", body=f"token={TOKEN}", headers={**FORM, "Accept": "text/html"}
    )
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/ui/"
    header = set_cookie(answer)
    assert header.startswith("jobtable_session=")
    attributes = cookie_attributes(header)
    assert attributes == {"httponly": "", "max-age": "43200", "path": "/ui", "samesite": "Strict"}
    assert TOKEN not in header


@pytest.mark.parametrize(
    "how",
    [
        {"protocol": "https"},
        # Behind a TLS-terminating proxy: plain HTTP here, but the browser's Origin says https.
        {"headers": {"Origin": "https://jobs.example.com", "Host": "jobs.example.com"}},
    ],
)
def test_the_cookie_is_secure_when_the_browser_came_over_https(client, how):
    headers = {**FORM, **how.get("headers", {})}
    answer = client.simulate_post(
        "/ui/login", body=f"token={TOKEN}", headers=headers, protocol=how.get("protocol", "http")
    )
    assert answer.status_code == 303
    assert "secure" in cookie_attributes(set_cookie(answer))


@pytest.mark.parametrize(
    "presented", ["", "wrong", TOKEN + "x", TOKEN[:-1], TOKEN.upper(), "t\u00f6k"]
)
def test_a_wrong_token_gets_the_login_page_again_and_no_cookie(client, presented):
    answer = client.simulate_post("/ui/login", body=f"token={presented}", headers=FORM)
    assert answer.status_code == 401
    assert "set-cookie" not in {name.lower() for name in answer.headers}
    assert "That is not the API token." in answer.text
    assert presented == "" or presented not in answer.text


def test_a_login_from_another_site_is_refused(client):
    answer = client.simulate_post(
        "/ui/login", body=f"token={TOKEN}", headers={**FORM, "Sec-Fetch-Site": "cross-site"}
    )
    assert answer.status_code == 403
    assert "set-cookie" not in {name.lower() for name in answer.headers}


@pytest.mark.parametrize(
    ("next_path", "location"),
    [
        ("/ui/jobs/abc", "/ui/jobs/abc"),
        ("/ui/?x=1", "/ui/?x=1"),
        ("//evil.example/ui/", "/ui/"),
        ("https://evil.example/ui/", "/ui/"),
        ("/ui\\..\\evil", "/ui/"),
        ("/api/v1/jobs", "/ui/"),
        ("/ui/login", "/ui/"),
    ],
)
def test_login_returns_only_to_a_dashboard_page(client, next_path, location):
    form = f"token={TOKEN}&next={falcon.uri.encode_value(next_path)}"
    answer = client.simulate_post("/ui/login", body=form, headers=FORM)
    assert answer.headers["Location"] == location


def test_a_browser_sent_to_log_in_comes_back_to_the_page_it_asked_for(client):
    sent = client.simulate_get("/ui/jobs/abc", headers={"Accept": "text/html"})
    assert sent.status_code == 303
    assert sent.headers["Location"] == "/ui/login?next=%2Fui%2Fjobs%2Fabc"
    page = client.simulate_get("/ui/login", params={"next": "/ui/jobs/abc"})
    assert 'name="next" value="/ui/jobs/abc"' in page.text


def test_logout_clears_the_cookie(client):
    browser = log_in(client)
    answer = browser.post(client, "/ui/logout")
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/ui/login"
    header = set_cookie(answer)
    assert header.startswith('jobtable_session="";')
    attributes = cookie_attributes(header)
    assert attributes["path"] == "/ui"
    expires = email.utils.parsedate_to_datetime(attributes["expires"])
    assert expires <= datetime.datetime.now(datetime.UTC)  # the browser drops it at once


def test_a_session_ends_twelve_hours_after_login(system, client):
    browser = log_in(client)
    system.clock.advance(12 * 3600 - 1)
    assert browser.get(client, "/ui/data/overview").status_code == 200
    system.clock.advance(1)
    assert browser.get(client, "/ui/data/overview").status_code == 401
    page = browser.get(client, "/ui/", Accept="text/html")
    assert (page.status_code, page.headers["Location"]) == (303, "/ui/login?next=%2Fui%2F")


def test_any_process_sharing_the_token_accepts_the_session_and_no_other_does(system, client):
    browser = log_in(client)
    same = falcon.testing.TestClient(create_app(system.runner, api_token=TOKEN, clock=system.clock))
    other = falcon.testing.TestClient(
        create_app(system.runner, api_token="another-token", clock=system.clock)
    )
    assert browser.get(same, "/ui/data/overview").status_code == 200
    assert browser.post(same, "/ui/queues/mail/pause").status_code == 303
    assert browser.get(other, "/ui/data/overview").status_code == 401


def test_a_session_cookie_is_signed_with_a_key_derived_from_the_token_not_the_token():
    keys = SessionKeys(TOKEN)
    session, cookie = keys.issue(now=1_000_000.0)
    assert TOKEN not in cookie
    assert keys.verify(cookie, now=1_000_000.0) == session
    assert keys.verify(cookie, now=session.expires) is None
    assert keys.csrf_token(session) != keys.csrf_token(keys.issue(now=1_000_000.0)[0])


# -- actions: CSRF and origin ------------------------------------------------------


def other_session_csrf(system) -> str:
    keys = SessionKeys(TOKEN)
    session, _ = keys.issue(now=system.clock.now().timestamp())
    return keys.csrf_token(session)


REFUSED_ACTIONS = {
    "no token": ("", {}),
    "wrong token": ("csrf=wrong", {}),
    "empty token": ("csrf=", {}),
    "from another site": (None, {"Sec-Fetch-Site": "cross-site"}),
    "from a sibling site": (None, {"Sec-Fetch-Site": "same-site"}),
    "another origin, no fetch metadata": (
        None,
        {"Sec-Fetch-Site": None, "Origin": "http://evil.example"},
    ),
    "opaque origin": (None, {"Sec-Fetch-Site": None, "Origin": "null"}),
}


@pytest.mark.parametrize("case", sorted(REFUSED_ACTIONS))
def test_an_action_without_its_csrf_token_or_from_another_site_is_refused_and_changes_nothing(
    system, client, case
):
    browser = log_in(client)
    body, headers = REFUSED_ACTIONS[case]
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    for path in ("/ui/queues/default/pause", f"/ui/jobs/{job_id}/cancel", "/ui/logout"):
        answer = client.simulate_post(
            path,
            body=f"csrf={browser.csrf}" if body is None else body,
            headers={
                name: value
                for name, value in {
                    **browser.headers,
                    **FORM,
                    "Sec-Fetch-Site": "same-origin",
                    **headers,
                }.items()
                if value is not None
            },
        )
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json["error"]["code"] == "forbidden"
        assert "set-cookie" not in {name.lower() for name in answer.headers}
    assert [(queue.name, queue.paused) for queue in system.runner.queues()] == [("default", False)]
    assert system.runner.get(job_id).status.value == "queued"


def test_the_csrf_token_of_another_session_is_refused(system, client):
    browser = log_in(client)
    answer = browser.post(
        client, "/ui/queues/default/pause", body=f"csrf={other_session_csrf(system)}"
    )
    assert answer.status_code == 403
    assert system.runner.queues() == []  # no pause was stored


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-origin"},
        {"Origin": "http://falconframework.org"},  # the test client's Host
        {},  # neither: not a browser another site can drive; the token still counts
    ],
)
def test_an_action_with_its_token_from_its_own_origin_is_done(system, client, headers):
    browser = log_in(client)
    answer = client.simulate_post(
        "/ui/queues/mail/pause",
        body=f"csrf={browser.csrf}",
        headers={**browser.headers, **FORM, **headers},
    )
    assert answer.status_code == 303, answer.text
    assert ("mail", True) in [(queue.name, queue.paused) for queue in system.runner.queues()]


def test_the_csrf_token_may_come_in_a_header(system, client):
    browser = log_in(client)
    answer = client.simulate_post(
        "/ui/queues/mail/pause",
        headers={**browser.headers, "X-CSRF-Token": browser.csrf, "Sec-Fetch-Site": "same-origin"},
    )
    assert answer.status_code == 303


# -- pages ------------------------------------------------------------------


def test_pause_and_resume_from_the_overview_are_stored_and_shown(system, client):
    browser = log_in(client)
    system.runner.builtins.noop.enqueue(NoopPayload())
    paused = browser.post(client, "/ui/queues/default/pause")
    assert (paused.status_code, paused.headers["Location"]) == (303, "/ui/#queues")
    assert [(queue.name, queue.paused) for queue in system.runner.queues()] == [("default", True)]
    page = browser.get(client, "/ui/").text
    assert '<tr data-queue="default" data-paused="true"' in page
    assert 'action="/ui/queues/default/resume"' in page
    browser.post(client, "/ui/queues/default/resume")
    assert system.runner.queues()[0].paused is False
    assert 'action="/ui/queues/default/pause"' in browser.get(client, "/ui/").text


def test_the_overview_data_counts_queues_and_lists_runners(system, client):
    system.runner.builtins.noop.enqueue(NoopPayload())
    browser = log_in(client)
    data = browser.get(client, "/ui/data/overview").json
    assert data["queues"] == [
        {
            "name": "default",
            "paused": False,
            "counts": {"queued": 1, "running": 0, "succeeded": 0, "failed": 0},
            "states": states(available=1),
            "limit": None,
            "rate": None,
            "running": 0,
            "held_back": 0,
        }
    ]
    assert data["runners"] == []
    assert data["at"] == system.clock.now().timestamp()


def test_cancel_from_a_job_page_cancels_it_and_says_so(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    answer = browser.post(client, f"/ui/jobs/{job_id}/cancel")
    assert answer.headers["Location"] == f"/ui/jobs/{job_id}?done=cancelled"
    job = system.runner.get(job_id)
    assert (job.status.value, job.error) == ("failed", "cancelled")
    page = browser.get(client, answer.headers["Location"]).text
    assert "The job was cancelled." in page
    assert 'class="status status-failed"' in page
    assert f'action="/ui/jobs/{job_id}/cancel"' not in page


def test_a_notice_is_chosen_by_name_and_never_taken_from_the_address(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    page = browser.get(client, f"/ui/jobs/{job_id}?done=%3Cb%3Ehi%3C/b%3E").text
    assert 'class="notice"' not in page
    assert "hi</b>" not in page and "hi&lt;" not in page


def test_an_unknown_job_has_a_page_saying_so(client):
    browser = log_in(client)
    answer = browser.get(client, "/ui/jobs/01900000-0000-7000-8000-0000000000ff")
    assert answer.status_code == 404
    assert "There is no job with this id" in answer.text


def test_every_job_value_shows_as_text_never_as_markup(system, client):
    register_markup_kind(system.kinds)
    job_id = system.runner.enqueue(MARKUP_KIND, {"text": SCRIPT})
    system.runner.drain()
    browser = log_in(client)
    page = browser.get(client, f"/ui/jobs/{job_id}").text
    assert SCRIPT not in page and MARKUP_KIND not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img" not in page and "<script>alert" not in page


def test_dashboard_pages_forbid_inline_script_and_style(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    for path in ("/ui/login", "/ui/", f"/ui/jobs/{job_id}"):
        answer = browser.get(client, path)
        policy = answer.headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "script-src 'self'" in policy
        assert "'unsafe-inline'" not in policy
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["X-Frame-Options"] == "DENY"
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", answer.text, re.S)
        assert scripts == [(' src="/ui/static/dashboard.js" defer', "")]
        assert not re.search(r"\son[a-z]+=", answer.text)
        assert " style=" not in answer.text and "<style" not in answer.text
    assert "Content-Security-Policy" not in client.simulate_get("/health").headers


def test_static_files_are_served_by_name_only(client):
    script = client.simulate_get("/ui/static/dashboard.js")
    assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert "innerHTML" not in script.text
    for path in ("/ui/static/nope.js", "/ui/static/..%2f..%2fpyproject.toml", "/ui/static/"):
        assert client.simulate_get(path).status_code in (401, 404), path


def test_a_wrong_form_type_or_a_huge_form_is_refused(client):
    browser = log_in(client)
    too_big = browser.post(client, "/ui/queues/mail/pause", body="csrf=" + "x" * 5000)
    assert too_big.status_code == 413
    as_json = browser.post(
        client,
        "/ui/queues/mail/pause",
        body='{"csrf": "x"}',
        **{"Content-Type": "application/json"},
    )
    assert as_json.status_code == 403


def test_times_are_shown_in_utc(system, client):
    browser = log_in(client)
    job_id = system.runner.builtins.noop.enqueue(NoopPayload())
    created = system.clock.now().astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert created in browser.get(client, f"/ui/jobs/{job_id}").text


# -- the overview's reads, shared by every open page ------------------------------


class Ticks:
    """A monotonic clock the test moves; ``per_call`` makes each reading later (a slow read)."""

    def __init__(self, per_call: float = 0.0) -> None:
        self.now = 0.0
        self.per_call = per_call

    def __call__(self) -> float:
        self.now += self.per_call
        return self.now


def overview_reads(system, ticks: Ticks) -> OverviewReads:
    return OverviewReads(
        system.runner, wall=lambda: system.clock.now().timestamp(), monotonic=ticks
    )


def queued(read) -> int:
    return sum(queue.counts["queued"] for queue in read.queues)


def test_polls_share_one_read_for_the_poll_interval(system):
    ticks = Ticks()
    reads = overview_reads(system, ticks)
    first = reads.shared()
    system.runner.builtins.noop.enqueue(NoopPayload())
    ticks.now = POLL_SECONDS - 0.01
    assert reads.shared() is first
    ticks.now = POLL_SECONDS
    assert queued(reads.shared()) == 1


def test_a_slow_read_is_shared_for_ten_times_as_long_as_it_took(system):
    ticks = Ticks(per_call=2.0)  # the read itself takes 2 s: shared for 20 s after it ended
    reads = overview_reads(system, ticks)
    first = reads.shared()  # read from 2 to 4
    system.runner.builtins.noop.enqueue(NoopPayload())
    ticks.per_call = 0.0
    ticks.now = 4 + SHARE_FACTOR * 2 - 0.01
    assert reads.shared() is first
    ticks.now = 4 + SHARE_FACTOR * 2
    assert queued(reads.shared()) == 1


def test_drawing_the_page_reads_afresh_and_the_polls_get_that_read(system):
    reads = overview_reads(system, Ticks())
    reads.shared()
    system.runner.builtins.noop.enqueue(NoopPayload())
    page = reads.fresh()
    assert queued(page) == 1
    assert reads.shared() is page


def test_the_overview_shows_each_limit_its_use_and_what_it_holds_back(system, client):
    browser = log_in(client)
    assert 'id="limits"' not in browser.get(client, "/ui/").text  # nothing limited: no panel
    handle = system.kinds.register(
        "export", export, payload=NoopPayload, limit=Limit(1), rate=Rate(5, per=60)
    )
    for _ in range(3):
        handle.enqueue(NoopPayload())
    for _ in range(2):
        system.runner.builtins.noop.enqueue(NoopPayload(), queue="slow")
    system.runner.set_queue_limit("slow", QueueLimit(running=1))
    rules = system.kinds.claim_rules()
    system.store.run_batch(
        Batch(claim=5, limits=rules.limits, rates=rules.rates, limited_queues=frozenset({"slow"})),
        runner_id="elsewhere",
        now=system.clock.now(),
        kinds=["export", "noop"],
    )
    page = browser.get(client, "/ui/").text
    rows = re.findall(r'<tr data-limited="([^"]+)"><th scope="row">[^<]*</th>(.*?)</tr>', page)
    cells = [(name, re.findall(r"<td[^>]*>([^<]*)</td>", row)) for name, row in rows]
    assert cells == [
        ("queue:slow", ["1", "—", "1", "1"]),
        ("kind:export", ["1", "5/60s", "1", "2"]),
    ]
    data = browser.get(client, "/ui/data/overview").json["limits"]
    assert [(row["name"], row["running"], row["held_back"]) for row in data] == [
        ("slow", 1, 1),
        ("export", 1, 2),
    ]


def test_the_job_list_filters_by_state_and_a_failed_attempt_names_its_class(system, client):
    def breaks(ctx, payload: NoopPayload) -> NoopResult:
        raise LookupError("card 4242-4242 declined")

    broken = system.kinds.register("breaks", breaks, payload=NoopPayload)
    failed = broken.enqueue(NoopPayload())
    later = system.runner.builtins.noop.enqueue(NoopPayload(), delay=3600)
    system.runner.drain()
    browser = log_in(client)
    page = browser.get(client, "/ui/jobs?state=scheduled").text
    assert later in page and failed not in page
    assert '<option value="scheduled" selected>scheduled</option>' in page
    page = browser.get(client, "/ui/jobs?state=failed").text
    assert failed in page and later not in page
    job_page = browser.get(client, f"/ui/jobs/{failed}").text
    assert "internal_error (builtins.LookupError)" in job_page
    assert "4242" not in job_page and "declined" not in job_page
    assert "<dt>state</dt><dd>failed</dd>" in job_page
    refused = browser.get(client, "/ui/jobs?state=waiting")
    assert refused.status_code == 400 and "state: must be one of" in refused.text
