"""The operator's day in a real browser (issue: the operator's day): every state shown right,
a failed attempt's class without its message, redacted payload fields that never reach the
page, a bulk retry of 500 failed jobs, search by a short id, schedules, the charts, and a
layout that works at 1,400 and 360 pixels wide. Screenshots of each go to
$JOBTABLE_SCREENSHOTS when set."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import attrs
import pytest
from selenium.webdriver.common.by import By

from jobtable import Runner
from jobtable.core.enqueue_options import EnqueueOptions
from tests.e2e import operator_kinds
from tests.e2e.browser import chromium, page_errors, serving, wait_for
from tests.e2e.browser import log_in as signed_in
from tests.e2e.operator_kinds import CARD_NUMBER, SECRET_MESSAGE

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

TOKEN = "operator-token-8d2a41"
WIDE, NARROW = (1400, 1000), (360, 780)


@attrs.define
class Served:
    runner: Runner
    release: threading.Event
    base_url: str

    def wait_for_job(self, job_id: str, accept, what: str):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            detail = self.runner.detail(job_id)
            if detail is not None and accept(detail):
                return detail
            time.sleep(0.02)
        raise AssertionError(f"job {job_id}: not within 20s: {what}")


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    release = threading.Event()
    with serving(
        tmp_path, lambda kinds: operator_kinds.register(kinds, release), token=TOKEN, workers=4
    ) as (runner, base_url):
        try:
            yield Served(runner=runner, release=release, base_url=base_url)
        finally:
            release.set()


@pytest.fixture(params=[WIDE, NARROW], ids=["1400px", "360px"])
def window(request) -> tuple[int, int]:
    return request.param


@pytest.fixture
def driver(window) -> Iterator:
    made = chromium(window)
    if window == NARROW:  # Chromium's window is never under 500 px: emulate a phone's
        made.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": NARROW[0], "height": NARROW[1], "deviceScaleFactor": 1, "mobile": True},
        )
    try:
        yield made
    finally:
        made.quit()


def log_in(driver, served: Served) -> None:
    signed_in(driver, served.base_url, TOKEN)


WIDER = """
const limit = document.documentElement.clientWidth;
if (document.documentElement.scrollWidth <= limit) return [];
return Array.from(document.querySelectorAll("body *"))
  .filter((e) => e.getBoundingClientRect().right > limit + 0.5 && !e.closest(".table-scroll table"))
  .map((e) => e.tagName.toLowerCase() + (e.className ? "." + e.className : ""))
  .slice(0, 8);
"""


def fits(driver) -> bool:
    """Nothing on the page makes it scroll sideways (wide tables scroll in their own box)."""
    wider = driver.execute_script(WIDER)
    assert wider == [], f"wider than the page: {wider}"
    return True


def states_listed(driver) -> dict[str, str]:
    return {
        row.get_attribute("data-job"): row.find_element(By.CSS_SELECTOR, "td.state").text
        for row in driver.find_elements(By.CSS_SELECTOR, "tr[data-job]")
    }


def every_state(served: Served) -> dict[str, str]:
    """A job in each state, by the state it is in."""
    runner = served.runner
    jobs = {
        "succeeded": runner.enqueue("hold", {}),
        "failed": runner.enqueue("boom", {}),
        "retrying": runner.enqueue("patient", {}),
        "scheduled": runner.enqueue("hold", {}, EnqueueOptions(delay=3600)),
        "cancelled": runner.enqueue("hold", {}, EnqueueOptions(delay=3600)),
        "timed_out": runner.enqueue("hold", {}, EnqueueOptions(timeout=0.2)),
    }
    runner.cancel(jobs["cancelled"])
    served.wait_for_job(jobs["timed_out"], lambda d: d.state == "timed_out", "timed out")
    served.wait_for_job(jobs["failed"], lambda d: d.state == "failed", "failed")
    served.wait_for_job(jobs["retrying"], lambda d: d.state == "retrying", "retrying")
    served.release.set()
    served.wait_for_job(jobs["succeeded"], lambda d: d.state == "succeeded", "succeeded")
    served.release.clear()
    jobs["running"] = runner.enqueue("hold", {})
    served.wait_for_job(jobs["running"], lambda d: d.state == "running", "running")
    runner.pause_queue("parked")
    jobs["available"] = runner.enqueue("hold", {}, EnqueueOptions(queue="parked"))
    return jobs


def test_every_state_shows_on_the_list_the_job_page_and_the_overview(
    served, driver, window, screenshots
):
    jobs = every_state(served)
    log_in(driver, served)
    width = f"{window[0]}px"
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "img[data-chart]"), "charts")
    assert fits(driver), "the overview scrolls sideways"
    for state in ("running", "failed", "cancelled", "timed_out", "available"):
        assert driver.find_element(By.CSS_SELECTOR, f'[data-total="{state}"]').text == "1"
    screenshots(driver, f"overview-{width}")
    driver.get(served.base_url + "/ui/jobs")
    shown = wait_for(driver, states_listed, "the list")
    assert {job_id: shown[job_id] for job_id in jobs.values()} == {v: k for k, v in jobs.items()}
    assert fits(driver), "the job list scrolls sideways"
    screenshots(driver, f"jobs-{width}")
    for state, job_id in jobs.items():
        driver.get(f"{served.base_url}/ui/jobs?state={state}")
        assert wait_for(driver, states_listed, state) == {job_id: state}
        driver.get(f"{served.base_url}/ui/jobs/{job_id}")
        row = wait_for(
            driver,
            lambda d: d.find_elements(By.XPATH, "//dt[.='state']/following-sibling::dd[1]"),
            state,
        )
        assert row[0].text == state
    # A count on the overview opens its list.
    driver.get(served.base_url + "/ui/")
    driver.find_element(By.CSS_SELECTOR, "a.state-card.state-timed_out").click()
    assert wait_for(driver, lambda d: "state=timed_out" in d.current_url and states_listed(d), "")
    assert page_errors(driver) == []


def test_a_failure_shows_its_class_and_never_its_message_or_a_redacted_field(
    served, driver, window, screenshots
):
    runner = served.runner
    failed = runner.enqueue("boom", {})
    card = runner.enqueue("card", {"number": CARD_NUMBER, "holder": "Ada"})
    served.wait_for_job(failed, lambda d: d.state == "failed", "failed")
    served.wait_for_job(card, lambda d: d.state == "failed", "declined")
    log_in(driver, served)
    driver.get(f"{served.base_url}/ui/jobs/{failed}")
    outcome = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#attempts tbody td"), "")
    assert "internal_error (builtins.ValueError)" in [cell.text for cell in outcome]
    assert SECRET_MESSAGE not in driver.page_source
    screenshots(driver, f"job-failed-{window[0]}px")
    driver.get(f"{served.base_url}/ui/jobs/{card}")
    wait_for(driver, lambda d: "Ada" in d.page_source, "the payload")
    assert '"***"' in driver.page_source and CARD_NUMBER not in driver.page_source
    assert fits(driver)
    screenshots(driver, f"job-redacted-{window[0]}px")
    # The list's search finds a job by the short id it shows.
    driver.get(served.base_url + "/ui/jobs")
    short = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'a[title="{card}"]'), "")
    assert short[0].text == "…" + card[-8:]
    search = driver.find_element(By.NAME, "id")
    search.send_keys(card[-8:])
    driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
    assert wait_for(driver, lambda d: "id=" in d.current_url and states_listed(d), "") == {
        card: "failed"
    }
    assert page_errors(driver) == []


def test_a_bulk_retry_of_500_failed_jobs_from_the_list(served, driver, window, screenshots):
    if window != WIDE:
        pytest.skip("once is enough: the 360 px pages are looked at by the tests above")
    runner = served.runner
    ids = [runner.enqueue("boom", {}, EnqueueOptions(queue="bulk")) for _ in range(500)]
    for job_id in ids:
        served.wait_for_job(job_id, lambda d: d.state == "failed", "failed")
    runner.pause_queue("bulk")  # retried, they wait: the test counts them
    log_in(driver, served)
    driver.get(f"{served.base_url}/ui/jobs?state=failed&queue=bulk")
    driver.find_element(By.LINK_TEXT, "Retry every matching job…").click()
    confirm = wait_for(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, "form.confirm button"), ""
    )
    assert confirm[0].text == "Retry 500 jobs"
    screenshots(driver, "bulk-confirm")
    confirm[0].click()
    wait_for(driver, lambda d: "500 jobs queued again." in d.page_source, "the notice")
    screenshots(driver, "bulk-done")
    assert {runner.detail(job_id).state for job_id in ids} == {"available"}
    assert page_errors(driver) == []


def test_schedules_are_listed(served, driver, window, screenshots):
    log_in(driver, served)
    driver.find_element(By.LINK_TEXT, "Schedules").click()
    rows = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "main tbody tr"), "rows")
    assert "nightly-report" in rows[0].text and "30 2 * * *" in rows[0].text
    assert "Europe/Paris" in rows[0].text
    assert fits(driver)
    screenshots(driver, f"schedules-{window[0]}px")
    assert page_errors(driver) == []
