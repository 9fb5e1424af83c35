"""Start real ``jobtable`` processes and talk to them over loopback."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.browser import browser, screenshots  # noqa: F401 (fixtures)
from tests.support.databases import ENGINES, database_for

REPO = Path(__file__).resolve().parents[2]
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))


class ServeProcess:
    def __init__(self, database: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.database = database
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("JOBTABLE_")}
        environment = {**inherited, "PYTHONPATH": str(REPO), **(env or {})}
        self.process = subprocess.Popen(
            [JOBTABLE, "serve", "--database", str(database), "--listen", "127.0.0.1:0", *extra],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=environment,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.base_url = self._wait_for_listening()
        given = (env or {}).get("JOBTABLE_API_TOKEN")
        self.token = given or Path(str(database) + ".token").read_text().strip()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            self.lines.put(line)

    def _wait_for_listening(self, within: float = 30.0) -> str:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            found = re.search(r"listening on (http://[\d.]+:\d+)", line)
            if found:
                return found.group(1)
        self.process.kill()
        raise AssertionError("jobtable serve never said it was listening:\n" + "".join(self.log))

    def request(
        self,
        path: str,
        *,
        token: str | None = None,
        body: dict | None = None,
        timeout: float = 10,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict]:
        """GET ``path``, or POST ``body`` as JSON to it; the status and the decoded answer."""
        headers = {**(headers or {}), "Authorization": f"Bearer {token or self.token}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def poll_job(self, job_id: str, accept, within: float = 30.0) -> dict:
        deadline = time.monotonic() + within
        body: dict = {}
        while time.monotonic() < deadline:
            status, body = self.request(f"/api/v1/jobs/{job_id}")
            assert status == 200, body
            if accept(body):
                return body
            time.sleep(0.02)
        raise AssertionError(f"job {job_id} never reached the state; last {body}")

    def stop(self, signum: int = signal.SIGTERM, within: float = 30.0) -> int:
        self.process.send_signal(signum)
        try:
            return self.process.wait(within)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture(params=ENGINES)
def database(request, tmp_path):
    """A new database of each engine: a SQLite path, or a URL naming a fresh PostgreSQL schema."""
    with database_for(request.param, tmp_path) as named:
        yield named


def wait_until(condition, within: float, what: str) -> float:
    """Seconds until ``condition()`` held, polling every 20 ms; AssertionError past ``within``."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        if condition():
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"{what} not within {within}s")


@pytest.fixture
def serve_processes():
    started: list[ServeProcess] = []

    def start(database: Path, *extra: str, env: dict[str, str] | None = None) -> ServeProcess:
        process = ServeProcess(database, *extra, env=env)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.process.poll() is None:
            process.process.kill()
            process.process.wait(10)
