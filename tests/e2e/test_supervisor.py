"""``--processes N`` (issue 12): N worker processes under one supervisor, each a runner of its
own; a dead child is replaced, stop signals reach every child, and ``serve``'s children
share one listening socket. Issue 18: one signal to every process of the tree is one stop,
children stop gracefully when their supervisor is killed, and the supervisor serves one
metrics listener for all of them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.entrypoints.wiring import open_store
from tests.e2e.conftest import wait_until
from tests.e2e.processes import enqueue, start_worker, stop
from tests.e2e.test_metrics_and_logs import TOKEN, completions, metrics_url, samples, scrape
from tests.e2e.trust_kinds import read_ledger, register
from tests.support.databases import query
from tests.support.pg_cluster import free_port

pytestmark = pytest.mark.e2e

STATUS = "SELECT status, error FROM jobs WHERE id = %s"


@pytest.fixture
def ledger(tmp_path) -> dict[str, str]:
    return {"JOBTABLE_TEST_LEDGER": str(tmp_path / "ledger.txt")}


def events(ledger: dict[str, str]) -> list[str]:
    return [event for event, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])]


def live_runners(database) -> list:
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        return store.runners()
    finally:
        store.close()


def runner_pids(database) -> set[int]:
    return {r.info.pid for r in live_runners(database)}


def children_registered(database, count: int = 2) -> set[int]:
    """The pids of the supervisor's children, once ``count`` of them have registered."""
    wait_until(lambda: len(runner_pids(database)) == count, 60, f"{count} processes registered")
    return runner_pids(database)


def running(pid: int) -> bool:
    """The process exists and is not a zombie left for whoever reaps it (an orphan's lot)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@contextlib.contextmanager
def killed_at_the_end(pids: set[int]) -> Iterator[None]:
    """Children a test may leave orphaned (their supervisor killed) are killed if still there."""
    try:
        yield
    finally:
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def supervised_worker(
    database, log: Path, ledger: dict[str, str], *extra: str
) -> Iterator[tuple[subprocess.Popen, set[int]]]:
    """``worker --processes 2`` of one worker each, in a process group of its own (as a
    terminal's foreground job is), and its children once registered; stopped after, and any
    child left behind killed."""
    supervisor = start_worker(database, log, "--processes", "2", *extra, workers=1, env=ledger,
                              new_session=True)  # fmt: skip
    children: set[int] = set()
    with killed_at_the_end(children):
        try:
            children |= children_registered(database)
            yield supervisor, children
        finally:
            stop(supervisor)


def test_a_worker_supervises_its_processes_and_replaces_one_that_dies(database, tmp_path):
    log = tmp_path / "worker.log"
    supervisor = start_worker(database, log, "--processes", "2", kinds="tests.e2e.trust_kinds")
    try:
        first = children_registered(database)
        assert supervisor.pid not in first  # the supervisor runs no jobs itself
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: replaced(database, first, victim), 60, "a new process in its place")
        assert "exited with signal SIGKILL; starting another" in log.read_text()
        children = runner_pids(database) - {victim}
        # A survivor judges the killed one dead and settles it: its row goes, however long
        # the replacement took to start.
        wait_until(lambda: victim not in runner_pids(database), 60, "the killed runner settled")
    finally:
        code = stop(supervisor, within=60)
    assert code == 0, log.read_text()
    assert not [pid for pid in children if running(pid)]  # each stopped, and was waited for
    assert live_runners(database) == []  # each unregistered as it stopped


def replaced(database, first: set[int], victim: int) -> bool:
    """Two children registered again besides the killed one's row, one of them new."""
    now = runner_pids(database) - {victim}
    return len(now) == 2 and now != first - {victim}


def test_a_child_that_refuses_its_settings_stops_the_supervisor(tmp_path):
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    supervisor = start_worker(database, log, "--processes", "2", "--queues", "no good!")
    try:
        assert supervisor.wait(60) == 2, log.read_text()
    finally:
        stop(supervisor)
    assert "refused its settings" in log.read_text()


def test_serve_children_share_one_port(serve_processes, tmp_path: Path):
    served = serve_processes(tmp_path / "jobs.db", "--processes", "2", "--workers", "1")
    children_registered(served.database)
    job_ids = []
    for _ in range(10):
        status, body = served.request("/api/v1/jobs", body={"kind": "noop", "payload": {}})
        assert status == 202, body
        job_ids.append(body["id"])
    for job_id in job_ids:
        assert served.poll_job(job_id, lambda job: job["status"] == "succeeded")["error"] is None
    assert served.stop(within=60) == 0, "".join(served.log)


@pytest.mark.parametrize(
    ("sent_to", "signum"),
    [("the process group", signal.SIGINT), ("every pid", signal.SIGTERM)],
    ids=["ctrl-c to the process group", "sigterm to every pid"],
)
def test_one_signal_to_every_process_of_the_tree_lets_running_jobs_finish(
    tmp_path, ledger, sent_to, signum
):
    """Ctrl-C signals the terminal's process group; systemd signals every process of the unit.
    Each child gets the signal itself and again through its supervisor: still one stop."""
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    with supervised_worker(database, log, ledger, "--grace", "60") as (supervisor, children):
        # One job in each child (each has one worker), so both show what they did.
        job_ids = enqueue(database, "ledgered", [{"ms": 3000}] * 2, register=register)
        wait_until(lambda: events(ledger) == ["start"] * 2, 30, "both jobs starting")
        if sent_to == "the process group":
            os.killpg(supervisor.pid, signum)
        else:
            for pid in (supervisor.pid, *children):
                os.kill(pid, signum)
        assert supervisor.wait(60) == 0, log.read_text()
    assert events(ledger) == ["start", "start", "end", "end"], log.read_text()  # never told
    assert {query(database, STATUS, (job_id,))[0] for job_id in job_ids} == {("succeeded", None)}
    assert log.read_text().count("letting running ones finish") == 2
    assert "stop now" not in log.read_text()


def test_a_second_ctrl_c_stops_the_running_jobs_of_every_child_at_once(tmp_path, ledger):
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    with supervised_worker(database, log, ledger, "--grace", "600") as (supervisor, _):
        enqueue(database, "ledgered", [{"ms": 60000}], register=register)
        wait_until(lambda: events(ledger), 30, "the job starting")
        os.killpg(supervisor.pid, signal.SIGINT)
        wait_until(lambda: log.read_text().count("letting running ones finish") == 2, 30,
                   "both children in the graceful stop")  # fmt: skip
        assert events(ledger) == ["start"]
        os.killpg(supervisor.pid, signal.SIGINT)
        assert supervisor.wait(60) == 0, log.read_text()  # long before the 600 s grace
    assert events(ledger) == ["start", "stopped"]


def test_a_ctrl_c_while_the_children_are_still_starting_stops_them_cleanly(tmp_path):
    """The signal reaches them before they handle signals (Python starting, imports): it
    waits for their handlers, and they stop as soon as they can."""
    log = tmp_path / "worker.log"
    supervisor = start_worker(tmp_path / "jobs.db", log, "--processes", "2", new_session=True)
    try:
        wait_until(lambda: "supervising 2 processes" in log.read_text(), 30, "children started")
        os.killpg(supervisor.pid, signal.SIGINT)
        assert supervisor.wait(60) == 0, log.read_text()
    finally:
        stop(supervisor)
    assert "Traceback" not in log.read_text()
    assert log.read_text().count("INFO jobtable: stopped") == 2


def test_ctrl_c_pressed_again_and_again_still_ends_every_process_cleanly(tmp_path, ledger):
    """Signals that come while a process exits (its handlers gone) are ignored: they find it
    stopped cleanly, and must not kill it."""
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    with supervised_worker(database, log, ledger, "--grace", "600") as (supervisor, _):
        enqueue(database, "ledgered", [{"ms": 60000}], register=register)
        wait_until(lambda: events(ledger), 30, "the job starting")
        deadline = time.monotonic() + 60
        while supervisor.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(supervisor.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                supervisor.wait(0.02)  # the next press
        assert supervisor.wait(1) == 0, log.read_text()
    assert events(ledger) == ["start", "stopped"]
    assert log.read_text().count("INFO jobtable: stopped") == 2


def test_serve_children_stop_gracefully_when_their_supervisor_is_killed_and_free_the_port(
    serve_processes, tmp_path, ledger
):
    database = tmp_path / "jobs.db"
    kinds = ("--kinds", "tests.e2e.trust_kinds")
    metrics = tmp_path / "metrics"  # a killed supervisor leaves the one it made behind
    metrics.mkdir()
    served = serve_processes(database, "--processes", "2", "--workers", "1", *kinds,
                             env={**ledger, "PROMETHEUS_MULTIPROC_DIR": str(metrics)})  # fmt: skip
    children = children_registered(database)
    with killed_at_the_end(children):
        status, body = served.request(
            "/api/v1/jobs", body={"kind": "ledgered", "payload": {"ms": 2000}}
        )
        assert status == 202, body
        wait_until(lambda: events(ledger), 30, "the job starting")
        killed = time.monotonic()
        served.process.kill()
        served.process.wait(10)
        wait_until(
            lambda: "".join(served.log).count("supervisor is gone") == 2,
            30,
            "both children noticing",
        )
        noticed = time.monotonic() - killed
        print(f"both children noticed their supervisor's death within {noticed:.2f}s")
        wait_until(lambda: not any(running(pid) for pid in children), 60, "the children stopping")
    assert events(ledger) == ["start", "end"], "".join(served.log)  # the grace, as on SIGTERM
    assert query(database, STATUS, (body["id"],)) == [("succeeded", None)]
    assert live_runners(database) == []  # each unregistered: a clean stop
    port = served.base_url.rsplit(":", 1)[1]
    again = serve_processes(database, "--listen", f"127.0.0.1:{port}", "--workers", "0", *kinds)
    assert again.base_url == served.base_url  # the port was free to bind again
    assert again.request(f"/api/v1/jobs/{body['id']}")[1]["status"] == "succeeded"
    assert again.stop(within=60) == 0


def test_supervised_workers_share_one_metrics_listener_that_counts_every_childs_jobs(
    tmp_path, ledger
):
    database = tmp_path / "jobs.db"
    log = tmp_path / "worker.log"
    address = f"127.0.0.1:{free_port()}"  # one address, as a deploy names it
    supervisor = start_worker(database, log, "--processes", "2", "--metrics-listen", address,
                              workers=1, env={**ledger, "JOBTABLE_API_TOKEN": TOKEN})  # fmt: skip
    try:
        url = metrics_url(log)
        assert url == f"http://{address}/metrics"
        children = children_registered(database)
        # One child's only worker holds the first job, so the other runs the second.
        (held,) = enqueue(database, "ledgered", [{"ms": 60000}], register=register)
        wait_until(lambda: events(ledger) == ["start"], 30, "the first job running")
        (quick,) = enqueue(database, "ledgered", [{"ms": 1}], register=register)
        wait_until(lambda: query(database, STATUS, (quick,)) == [("succeeded", None)], 30,
                   "the second job done")  # fmt: skip
        cancel(database, held)
        expected = {("ledgered", "succeeded"): 1.0, ("ledgered", "cancelled"): 1.0}
        wait_until(lambda: completions(scrape(url)[1]) == expected, 30, "both completions")
        status, text = scrape(url)
        assert status == 200
        found = samples(text)
        assert found[("jobtable_runners", ())] == 2
        assert found[("jobtable_busy_workers", ())] == 0
        assert found[("jobtable_job_run_seconds_count", (("kind", "ledgered"),))] == 2
        assert scrape(url, token="wrong")[0] == 401
    finally:
        assert stop(supervisor, within=60) == 0, log.read_text()
    ran_in = {pid for event, _, _, pid, _ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
              if event == "start"}  # fmt: skip
    assert ran_in == children  # a job in each child, both counted by the one listener
    assert log.read_text().count("serving metrics on") == 1


def cancel(database, job_id: str) -> None:
    store = open_store(str(database), synchronous="normal", now=SystemClock().now())
    try:
        runner = Runner(store, SystemClock(), workers=0)
        register(runner.kinds)
        runner.cancel(job_id)
    finally:
        store.close()
