"""The dashboard in a real browser: headless Chromium against a real waitress server.

The server, its runner and a SQLite file live in the test's process, so the
handlers wait on a gate the test holds: the test lets a job publish its next
step and watches the text change on screen. Every wait is on a condition
with a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import urlencode

import attrs
import pytest
from selenium.common.exceptions import (
    NoAlertPresentException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from jobtable import Runner
from jobtable.core import Job
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.limits import QueueLimit
from tests.e2e import dashboard_kinds
from tests.e2e.browser import chromium, page_errors, serving, wait_for
from tests.e2e.browser import log_in as signed_in
from tests.e2e.dashboard_kinds import StepGate
from tests.support.markup_kind import MARKUP_KIND, SCRIPT

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

TOKEN = "dashboard-token-5c1f0b"


@attrs.define
class Dashboard:
    runner: Runner
    gate: StepGate
    base_url: str

    def wait_for_job(self, job_id: str, accept, what: str) -> Job:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            job = self.runner.get(job_id)
            if job is not None and accept(job):
                return job
            time.sleep(0.02)
        raise AssertionError(
            f"job {job_id}: not within 15s: {what}; last {self.runner.get(job_id)}"
        )


@pytest.fixture
def markup_kind() -> str:
    """A test that asks for this gets a server that also runs a kind named with markup."""
    return MARKUP_KIND


@pytest.fixture
def dashboard(request, tmp_path) -> Iterator[Dashboard]:
    gate = StepGate()
    markup = "markup_kind" in request.fixturenames

    def register(kinds) -> None:
        dashboard_kinds.register(kinds, gate, markup=markup)

    with serving(tmp_path, register, token=TOKEN, workers=3) as (runner, base_url):
        yield Dashboard(runner=runner, gate=gate, base_url=base_url)


def log_in(driver, dashboard: Dashboard) -> None:
    signed_in(driver, dashboard.base_url, TOKEN)


def text_of(driver, selector: str) -> str:
    """The first match's text, read again when the page replaced it between find and read."""
    for _ in range(100):
        try:
            found = driver.find_elements(By.CSS_SELECTOR, selector)
            return found[0].text if found else ""
        except StaleElementReferenceException:
            continue
        except WebDriverException as error:
            if "does not belong to the document" not in str(error):
                raise
    raise AssertionError(f"{selector}: replaced on every read")


def field(driver, name: str) -> str:
    """The text of the job page's field ``name`` (status, result, error, kind, live)."""
    return text_of(driver, f'[data-field="{name}"]')


def shows(driver, name: str, value: str) -> None:
    wait_for(driver, lambda d: field(d, name) == value, f"{name} shown as {value!r}")


def running(dashboard: Dashboard, kind: str = "progress", total: int = 1) -> str:
    """A job of ``kind`` that runs now, holding at the gate before its first step."""
    job_id = dashboard.runner.enqueue(kind, {"total": total})
    dashboard.wait_for_job(job_id, lambda job: job.status.value == "running", "running")
    return job_id


def open_job(driver, dashboard: Dashboard, job_id: str, *, status: str) -> None:
    driver.get(f"{dashboard.base_url}/ui/jobs/{job_id}")
    shows(driver, "status", status)


def press(driver, label: str) -> None:

    driver.find_element(By.XPATH, f"//main//button[normalize-space()='{label}']").click()


def test_log_in_with_a_wrong_token_then_the_right_one(dashboard, browser, screenshots):

    browser.get(dashboard.base_url + "/ui/")
    wait_for(browser, lambda d: d.find_elements(By.ID, "token"), "the login form")
    browser.find_element(By.ID, "token").send_keys("not-the-token")
    browser.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait_for(browser, lambda d: "That is not the API token." in d.page_source, "the refusal")
    screenshots(browser, "login-refused")
    assert browser.get_cookie("jobtable_session") is None
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait_for(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, "body[data-page=overview]"), "overview"
    )
    cookie = browser.get_cookie("jobtable_session")
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
    press_logout = browser.find_element(By.XPATH, "//header//button[normalize-space()='Log out']")
    press_logout.click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "token"), "the login page after logout")
    assert browser.get_cookie("jobtable_session") is None
    assert page_errors(browser) == []


def test_pause_a_queue_on_the_overview(dashboard, browser, screenshots):

    dashboard.runner.enqueue("progress", {"total": 2})  # a job, so the queue "default" is listed
    log_in(browser, dashboard)
    row = 'tr[data-queue="default"]'
    wait_for(browser, lambda d: text_of(d, row + " td:nth-of-type(1)") == "active", "queue active")
    browser.find_element(By.CSS_SELECTOR, row + " button").click()
    wait_for(browser, lambda d: text_of(d, row + " td:nth-of-type(1)") == "paused", "shown paused")
    assert [(q.name, q.paused) for q in dashboard.runner.queues()] == [("default", True)]
    assert text_of(browser, row + " button") == "Resume"
    screenshots(browser, "overview-paused")
    browser.find_element(By.CSS_SELECTOR, row + " button").click()
    wait_for(browser, lambda d: text_of(d, row + " td:nth-of-type(1)") == "active", "resumed")
    assert [(q.name, q.paused) for q in dashboard.runner.queues()] == [("default", False)]
    assert page_errors(browser) == []


def test_cancel_a_running_job_from_its_page(dashboard, browser, screenshots):
    job_id = running(dashboard, total=5)
    log_in(browser, dashboard)
    open_job(browser, dashboard, job_id, status="running")
    press(browser, "Cancel")
    shows(browser, "status", "failed")
    shows(browser, "error", "cancelled")
    job = dashboard.runner.get(job_id)
    assert (job.status.value, job.error) == ("failed", "cancelled")
    screenshots(browser, "job-cancelled")
    assert page_errors(browser) == []


def test_markup_in_a_job_shows_as_text(dashboard, browser, screenshots, markup_kind):
    job_id = dashboard.runner.enqueue(markup_kind, {"text": SCRIPT})
    dashboard.wait_for_job(job_id, lambda job: job.status.value == "succeeded", "succeeded")
    log_in(browser, dashboard)
    open_job(browser, dashboard, job_id, status="succeeded")
    assert field(browser, "kind") == markup_kind
    assert SCRIPT in field(browser, "result")
    assert text_of(browser, "h1") == markup_kind
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main script") == []
    scripts = browser.find_elements(By.TAG_NAME, "script")
    assert [s.get_attribute("src") for s in scripts] == [
        dashboard.base_url + "/ui/static/dashboard.js"
    ]
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    screenshots(browser, "job-markup")
    # The overview lists the live runner's kinds: the markup kind among them, as text.
    browser.get(dashboard.base_url + "/ui/")
    wait_for(browser, lambda d: markup_kind in text_of(d, "#runners tbody"), "the runner's kinds")
    assert browser.find_elements(By.CSS_SELECTOR, "main img:not([data-chart])") == []
    assert page_errors(browser) == []


def test_a_missing_browser_skips_locally_and_fails_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium-driver"):
        chromium(binary="/nonexistent/chromium", driver="/nonexistent/chromedriver")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the browser tests"):
        chromium(binary="/nonexistent/chromium", driver="/nonexistent/chromedriver")


def test_watch_a_jobs_progress_change_on_its_page(dashboard, browser, screenshots):
    job_id = running(dashboard, total=4)
    log_in(browser, dashboard)
    open_job(browser, dashboard, job_id, status="running")
    assert field(browser, "result") == "null"
    shows(browser, "live", "Live: following changes.")
    for done in (1, 2, 3):
        dashboard.gate.allow(job_id)
        wait_for(
            browser,
            lambda d, done=done: f'"done": {done},' in field(d, "result"),
            f"step {done} on screen",
        )
        if done == 2:
            screenshots(browser, "job-progress")
    dashboard.gate.allow(job_id)
    shows(browser, "status", "succeeded")
    # The page draws itself again on the new status: read the result once it has.
    wait_for(browser, lambda d: '"done": 4,' in field(d, "result"), "the final result")
    assert dashboard.runner.get(job_id).status.value == "succeeded"
    assert page_errors(browser) == []


def test_retry_a_failed_job_from_its_page(dashboard, browser, screenshots):
    job_id = dashboard.runner.enqueue("flaky", {"total": 1})
    dashboard.wait_for_job(job_id, lambda job: job.error == "flaky", "failed flaky")
    log_in(browser, dashboard)
    open_job(browser, dashboard, job_id, status="failed")
    assert field(browser, "error") == "flaky"
    press(browser, "Retry")
    shows(browser, "status", "running")
    assert dashboard.runner.get(job_id).status.value == "running"
    screenshots(browser, "job-retried")
    dashboard.gate.allow(job_id)
    shows(browser, "status", "succeeded")
    outcomes = wait_for(
        browser,
        lambda d: [
            row.text.split()[-1] for row in d.find_elements(By.CSS_SELECTOR, "#attempts tbody tr")
        ],
        "the attempts table",
    )
    assert outcomes == ["flaky", "succeeded"]
    assert page_errors(browser) == []


def test_filter_the_job_list_and_page_through_it(dashboard, browser, screenshots, markup_kind):
    echoed = [dashboard.runner.enqueue(markup_kind, {"text": f"<b>{n}</b>"}) for n in range(3)]
    for job_id in echoed:
        dashboard.wait_for_job(job_id, lambda job: job.status.value == "succeeded", "succeeded")
    dashboard.runner.pause_queue("default")
    queued = [dashboard.runner.enqueue("progress", {"total": 1}) for _ in range(55)]
    log_in(browser, dashboard)
    browser.get(dashboard.base_url + "/ui/jobs")
    Select(browser.find_element(By.NAME, "status")).select_by_value("queued")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    first = wait_for(browser, lambda d: listed(d) if "status=queued" in d.current_url else None, "")
    assert first == list(reversed(queued))[:50]  # newest first, a page of 50
    screenshots(browser, "job-list")
    browser.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    second = wait_for(browser, lambda d: listed(d) if "cursor=" in d.current_url else None, "")
    assert second == list(reversed(queued))[50:]
    assert browser.find_elements(By.CSS_SELECTOR, "a[rel=next]") == []
    browser.find_element(By.CSS_SELECTOR, "a[rel=prev]").click()
    back = wait_for(browser, lambda d: listed(d) if "before=" in d.current_url else None, "")
    assert back == first
    browser.get(dashboard.base_url + "/ui/jobs?" + urlencode({"kind": markup_kind}))
    assert wait_for(browser, listed, "the markup kind's jobs") == list(reversed(echoed))
    assert "<b>0</b>" in text_of(browser, "#jobs tbody")
    assert browser.find_elements(By.CSS_SELECTOR, "#jobs b") == []
    assert page_errors(browser) == []


def listed(driver) -> list[str]:
    return [
        row.get_attribute("data-job")
        for row in driver.find_elements(By.CSS_SELECTOR, "tr[data-job]")
    ]


def cell(driver, queue: str, state: str) -> str:
    return text_of(driver, f'tr[data-queue="{queue}"] td[data-state="{state}"]')


def test_the_overview_follows_counts_throughput_and_queues_paused_elsewhere(
    dashboard, browser, screenshots
):
    runner = dashboard.runner
    running(dashboard)
    mail = [runner.enqueue("flaky", {"total": 1}, EnqueueOptions(queue="mail")) for _ in range(2)]
    for job_id in mail:
        dashboard.wait_for_job(job_id, lambda job: job.error == "flaky", "failed")
    runner.enqueue("progress", {"total": 1}, EnqueueOptions(queue="reports", delay=3600))
    log_in(browser, dashboard)
    assert (cell(browser, "default", "running"), cell(browser, "mail", "failed")) == ("1", "2")
    assert text_of(browser, '[data-rate="*"]') == "measuring…"
    quick = [runner.enqueue("progress", {"total": 1}) for _ in range(6)]
    for job_id in quick:
        dashboard.gate.allow(job_id)
        dashboard.wait_for_job(job_id, lambda job: job.status.value == "succeeded", "succeeded")
    # The page's next read (every 5 s) shows the new counts and a rate from the two reads.
    wait_for(browser, lambda d: cell(d, "default", "succeeded") == "6", "six succeeded")
    rate = wait_for(
        browser, lambda d: text_of(d, '[data-rate="*"]').replace(".", "").isdigit(), "a rate"
    )
    assert rate and float(text_of(browser, '[data-rate="*"]')) > 0
    assert text_of(browser, '[data-total="succeeded"]') == "6"
    runner.pause_queue("reports")  # as another process or the CLI would
    wait_for(browser, lambda d: text_of(d, 'tr[data-queue="reports"] td') == "paused", "paused")
    assert text_of(browser, 'tr[data-queue="reports"] button') == "Resume"
    assert runner.id in text_of(browser, "#runners tbody")
    screenshots(browser, "overview")
    assert page_errors(browser) == []


def test_the_overview_shows_a_queue_limit_set_elsewhere_fill_and_drain(
    dashboard, browser, screenshots
):
    runner = dashboard.runner
    log_in(browser, dashboard)
    runner.set_queue_limit("slow", QueueLimit(running=1))  # as the CLI or the API would
    wait_for(browser, lambda d: text_of(d, '#limits tr[data-limited="queue:slow"]'), "the panel")
    jobs = [
        runner.enqueue("progress", {"total": 1}, EnqueueOptions(queue="slow")) for _ in range(3)
    ]
    dashboard.wait_for_job(jobs[0], lambda job: job.status.value == "running", "running")
    held = '#limits tr[data-limited="queue:slow"] td[data-limit-held]'
    wait_for(browser, lambda d: text_of(d, held) == "2", "two held back")
    assert text_of(browser, 'tr[data-queue="slow"] td[data-held]') == "2"
    screenshots(browser, "overview-limits")
    for job_id in jobs:
        dashboard.wait_for_job(job_id, lambda job: job.status.value == "running", "running")
        dashboard.gate.allow(job_id)
        dashboard.wait_for_job(job_id, lambda job: job.status.value == "succeeded", "succeeded")
    wait_for(browser, lambda d: text_of(d, held) == "0", "none held back")
    assert page_errors(browser) == []
