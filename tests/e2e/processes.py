"""Start ``jobtable worker`` processes, enqueue to their database, stop them: shared by e2e tests."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import JOBTABLE, REPO, wait_until


def start_worker(
    database: Any,
    log: Path,
    *extra: str,
    kinds: str = "tests.e2e.trust_kinds",
    workers: int = 2,
    env: dict[str, str] | None = None,
    new_session: bool = False,
) -> subprocess.Popen:
    """A ``jobtable worker`` on ``database``, its stderr in ``log``; with ``new_session``, in a
    process group of its own (its pid names it), as a terminal's foreground job is."""
    process = subprocess.Popen(
        [JOBTABLE, "worker", "--workers", str(workers), "--kinds", kinds, *extra],
        env={
            "PYTHONPATH": str(REPO),
            "PATH": "/usr/bin:/bin",
            "JOBTABLE_DATABASE": str(database),
            "PYTHONFAULTHANDLER": "1",  # a hung stop dumps every thread's stack (see stop)
            **(env or {}),
        },
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        start_new_session=new_session,
    )
    _logs[process.pid] = log
    return process


_logs: dict[int, Path] = {}
"""Each started worker's log, by pid: a stop that hangs shows its end."""


def wait_for_start(log: Path, within: float = 30) -> None:
    """Until the worker logged its start line: registered, first sweep taken, workers running."""
    wait_until(lambda: " worker: database=" in log.read_text(), within, f"{log.stem} starting")


def stop(process: subprocess.Popen, signum: int = signal.SIGTERM, within: float = 30) -> int:
    if process.poll() is None:
        process.send_signal(signum)
        try:
            process.wait(within)
        except subprocess.TimeoutExpired as hung:
            raise AssertionError(f"the process did not stop:\n{_dump_and_kill(process)}") from hung
    return int(process.returncode)


def _dump_and_kill(process: subprocess.Popen) -> str:
    """Kill a hung process, with every thread's stack dumped into its log first (SIGABRT
    with faulthandler on); the end of its log, when it has one."""
    process.send_signal(signal.SIGABRT)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    log = _logs.get(process.pid)
    return "" if log is None or not log.exists() else log.read_text()[-20_000:]


def enqueue(
    database: Any,
    kind: str,
    payloads: Iterable[dict[str, Any]],
    *,
    register: Callable[[Any], object],
    **store_options: Any,
) -> list[str]:
    """Enqueue through the Python API, as an application would; the ids in order."""
    store = open_store(
        str(database), synchronous="normal", now=SystemClock().now(), **store_options
    )
    try:
        runner = Runner(store, SystemClock())
        register(runner.kinds)
        return [runner.enqueue(kind, payload) for payload in payloads]
    finally:
        store.close()
