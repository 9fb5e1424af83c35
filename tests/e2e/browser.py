"""Headless Chromium from Debian's packages, driven by Selenium, downloading nothing.

Locally a machine without Chromium skips the browser tests and says why; in CI
(``CI=true``) a missing browser fails them, so they cannot silently not run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jobtable import Runner, SqliteStore, SystemClock
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http_server import HttpServer

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install -y chromium chromium-driver"
WAIT_SECONDS = 15.0


def _missing_browser(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the browser tests ({INSTALL})")
    pytest.skip(f"{reason} ({INSTALL})")


def chromium(
    window: tuple[int, int] = (1280, 900),
    *,
    binary: str | None = None,
    driver: str | None = None,
) -> Any:
    """A new headless Chromium (skipped or failed, as above, when it is not installed)."""
    binary = binary or shutil.which("chromium") or CHROMIUM
    driver = driver or shutil.which("chromedriver") or CHROMEDRIVER
    missing = [path for path in (binary, driver) if not os.path.exists(path)]
    if missing:
        _missing_browser(f"headless Chromium is not installed: {', '.join(missing)} missing")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing_browser("selenium is not installed (pip install -e '.[dev]')")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not download a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={window[0]},{window[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


@pytest.fixture
def browser() -> Iterator[Any]:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def screenshots(tmp_path: Path) -> Callable[[Any, str], Path]:
    """Save the browser's page as NAME.png (in $JOBTABLE_SCREENSHOTS when set, else tmp)."""
    folder = Path(os.environ.get("JOBTABLE_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)

    def take(driver: Any, name: str) -> Path:
        path = folder / f"{name}.png"
        assert driver.save_screenshot(str(path)), path
        return path

    return take


def wait_for(driver: Any, condition: Callable[[Any], Any], what: str) -> Any:
    """What ``condition(driver)`` gives once truthy, within WAIT_SECONDS, else a failure saying
    what was awaited."""
    from selenium.common.exceptions import (
        StaleElementReferenceException,
        TimeoutException,
        WebDriverException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    def looked(current: Any) -> Any:
        # Chromium sometimes tells of an element replaced between finding and reading it
        # as an inspector error rather than a stale element: the same thing, look again.
        try:
            return condition(current)
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return False
            raise

    # A page the dashboard loads again (after an action, on a status change) leaves the
    # elements found before it stale: look again.
    waiting = WebDriverWait(
        driver,
        WAIT_SECONDS,
        poll_frequency=0.05,
        ignored_exceptions=(StaleElementReferenceException,),
    )
    try:
        return waiting.until(looked)
    except TimeoutException:
        raise AssertionError(f"not within {WAIT_SECONDS}s: {what}") from None


@contextlib.contextmanager
def serving(
    folder: Path, register: Callable[[Any], object], *, token: str, workers: int
) -> Iterator[tuple[Runner, str]]:
    """A runner on a SQLite file in ``folder`` with the kinds ``register`` adds, and the
    dashboard served on a free loopback port: (the runner, the base URL)."""
    clock = SystemClock()
    store = SqliteStore.open(folder / "jobs.db", now=clock.now())
    runner = Runner(store, clock, workers=workers, logger=logging.getLogger("test.runner"))
    register(runner.kinds)
    runner.start()
    app = create_app(runner, api_token=token, logger=logging.getLogger("test.http"))
    server = HttpServer(app, host="127.0.0.1", port=0, threads=8, logger=logging.getLogger("t"))
    server.start()
    host, port = server.address
    try:
        yield runner, f"http://{host}:{port}"
    finally:
        server.stop(deadline=time.monotonic() + 5)
        runner.stop_now()
        runner.join(timeout=10)
        store.close()


def log_in(driver: Any, base_url: str, token: str) -> None:
    """Sign in to the dashboard with ``token``; returns on the overview."""
    from selenium.webdriver.common.by import By

    driver.get(base_url + "/ui/")  # signed out: sent to the login page
    wait_for(
        driver,
        lambda d: (
            d.current_url.startswith(base_url + "/ui/login") and d.find_elements(By.ID, "token")
        ),
        "the login form",
    )
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    wait_for(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, "body[data-page=overview]"), "overview"
    )


def page_errors(driver: Any) -> list[str]:
    """Script errors and Content-Security-Policy violations the page logged."""
    return [
        entry["message"]
        for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
    ]
