"""Draw docs/dashboard.png: the overview after a few minutes of real work.

A runner over a fresh SQLite file runs a mix of kinds for ``--minutes`` (jobs that succeed
after a few milliseconds, some that fail, a backlog in a paused queue, a job held running),
then headless Chromium logs in and takes the overview at 1,400 px.

    PYTHONPATH=. .venv/bin/python scripts/dashboard_screenshot.py --minutes 4 --out docs/dashboard.png
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import threading
import time
from pathlib import Path

import attrs

from jobtable import Failure, JobContext, Runner, SqliteStore, SystemClock
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http_server import HttpServer
from tests.e2e.browser import chromium, wait_for

TOKEN = "screenshot-token"


@attrs.frozen
class Work:
    millis: int


@attrs.frozen
class Done:
    def public(self):
        return {"done": True}


def register(runner: Runner, release: threading.Event) -> None:
    def send_email(ctx: JobContext, payload: Work) -> Done:
        time.sleep(payload.millis / 1000)
        return Done()

    def build_report(ctx: JobContext, payload: Work) -> Done:
        time.sleep(payload.millis / 1000)
        if random.random() < 0.15:
            raise Failure("source_unavailable")
        return Done()

    def charge_card(ctx: JobContext, payload: Work) -> Done:
        if random.random() < 0.05:
            raise ValueError("gateway said no")
        return Done()

    def export(ctx: JobContext, payload: Work) -> Done:
        while not release.is_set() and not ctx.wait(0.1):
            pass
        return Done()

    runner.kinds.register("send_email", send_email, payload=Work, queue="mail")
    runner.kinds.register("build_report", build_report, payload=Work, queue="reports",
                          failure_codes=["source_unavailable"])  # fmt: skip
    runner.kinds.register("charge_card", charge_card, payload=Work, queue="billing")
    runner.kinds.register("export", export, payload=Work, queue="exports", timeout=3600)


def keep_busy(runner: Runner, stop: threading.Event) -> None:
    """A load that rises and falls minute by minute, until ``stop``."""
    began = time.monotonic()
    while not stop.is_set():
        minute = int((time.monotonic() - began) // 60)
        for _ in range(4 + 3 * (minute % 3)):
            runner.enqueue("send_email", {"millis": random.randint(2, 40)})
        runner.enqueue("build_report", {"millis": random.randint(50, 300)})
        runner.enqueue("charge_card", {"millis": 5})
        stop.wait(1)


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=4)
    parser.add_argument("--out", default="docs/dashboard.png")
    args = parser.parse_args()
    clock = SystemClock()
    store = SqliteStore.open(Path(tempfile.mkdtemp()) / "jobs.db", now=clock.now())
    runner = Runner(store, clock, workers=4, logger=logging.getLogger("shot"))
    release = threading.Event()
    register(runner, release)
    runner.start()
    app = create_app(runner, api_token=TOKEN, logger=logging.getLogger("shot.http"))
    server = HttpServer(app, host="127.0.0.1", port=0, threads=4, logger=logging.getLogger("s"))
    server.start()
    host, port = server.address
    running = runner.enqueue("export", {"millis": 0})
    deadline = time.monotonic() + 10
    while runner.get(running).status.value != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    runner.pause_queue("exports")
    for _ in range(40):
        runner.enqueue("export", {"millis": 0})
    stop = threading.Event()
    load = threading.Thread(target=keep_busy, args=(runner, stop), daemon=True)
    load.start()
    time.sleep(args.minutes * 60)
    driver = chromium((1400, 1400))
    try:
        base = f"http://{host}:{port}"
        driver.get(base + "/ui/login")
        driver.find_element("id", "token").send_keys(TOKEN)
        driver.find_element("css selector", "form.login button").click()
        wait_for(driver, lambda d: d.find_elements("css selector", "img[data-chart]"), "charts")
        time.sleep(6)  # the page's second read: finished / min
        driver.save_screenshot(args.out)
    finally:
        driver.quit()
        stop.set()
        load.join()
        release.set()
        server.stop(deadline=time.monotonic() + 5)
        runner.stop_now()
        runner.join(timeout=10)
        store.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run()
