"""The promise, tried from outside: a job runs once unless its runner truly died.

Real ``jobtable worker`` processes on either engine; every handler start and
end is written to a ledger file outside the store (tests/e2e/trust_kinds.py),
so a test can hold what the handlers did against what the database says.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import time
from collections import Counter

import pytest

from tests.e2e.conftest import wait_until
from tests.e2e.processes import enqueue, start_worker, stop, wait_for_start
from tests.e2e.trust_kinds import read_ledger, register
from tests.support.databases import query
from tests.support.seeds import chosen_seed

pytestmark = pytest.mark.e2e

LOCK_SESSIONS = """
SELECT l.pid FROM pg_locks l JOIN jobtable_runners r
  ON ((l.classid::bigint << 32) | l.objid::bigint)
     = (hashtextextended(r.id, 0) & 4611686018427387903)
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
"""


def break_every_lock(database: str) -> int:
    """Take every runner's liveness lock away: the lock folder removed, or sessions terminated."""
    if not database.startswith("postgresql://"):
        shutil.rmtree(database + ".runners", ignore_errors=True)
        return 1
    pids = [pid for (pid,) in query(database, LOCK_SESSIONS)]
    for pid in pids:
        query(database, f"SELECT pg_terminate_backend({int(pid)})")
    return len(pids)


def statuses(database) -> Counter:
    return Counter(dict(query(database, "SELECT status, COUNT(*) FROM jobs GROUP BY status")))


@pytest.fixture
def ledger(tmp_path) -> dict[str, str]:
    return {"JOBTABLE_TEST_LEDGER": str(tmp_path / "ledger.txt")}


def test_runners_whose_locks_are_taken_again_and_again_run_every_job_once(
    database, tmp_path, ledger
):
    chance = random.Random(chosen_seed("this test"))
    ids = enqueue(database, "ledgered", [{"ms": chance.randint(20, 300)} for _ in range(150)],
                  register=register)  # fmt: skip
    logs = [tmp_path / f"runner-{n}.log" for n in range(2)]
    workers = [start_worker(database, log, workers=3, env=ledger) for log in logs]
    broken = 0
    try:
        for log in logs:
            wait_for_start(log)
        deadline = time.monotonic() + 120
        while statuses(database)["succeeded"] < len(ids) and time.monotonic() < deadline:
            broken += break_every_lock(str(database))
            time.sleep(chance.uniform(0.1, 0.5))  # the next blow comes at a random moment
    finally:
        for worker in workers:
            stop(worker)
    text = "".join(log.read_text() for log in logs)
    rows = query(database, "SELECT id, status, attempt FROM jobs")
    events = Counter(
        (event, job_id) for event, job_id, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
    )
    print(f"locks broken {broken} times; taken again {text.count('is taken again')} times")
    assert broken > 5 and "lock was lost and is taken again" in text
    assert {status for _, status, _ in rows} == {"succeeded"}
    assert {attempt for _, _, attempt in rows} == {1}
    assert all(events[("start", job_id)] == events[("end", job_id)] == 1 for job_id in ids)
    assert not any(event == "stopped" for event, _ in events)
    assert "interrupted" not in text and "dead runner" not in text


def test_a_running_job_survives_sigterm_within_the_grace_period(database, tmp_path, ledger):
    (job_id,) = enqueue(database, "ledgered", [{"ms": 2000}], register=register)
    log = tmp_path / "worker.log"
    worker = start_worker(database, log, "--grace", "10", env=ledger)
    try:
        wait_until(lambda: read_ledger(ledger["JOBTABLE_TEST_LEDGER"]), 30, "the job starting")
        assert stop(worker) == 0
    finally:
        stop(worker)
    assert query(database, "SELECT status, error FROM jobs WHERE id = %s", (job_id,)) == [
        ("succeeded", None)
    ]
    assert [event for event, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])] == ["start", "end"]
    assert "letting running ones finish" in log.read_text()


@pytest.mark.parametrize(
    ("kind", "settled"), [("ledgered", "failed"), ("ledgered_retry", "queued")]
)
def test_a_job_longer_than_the_grace_period_is_told_to_stop_when_it_ends(
    database, tmp_path, ledger, kind, settled
):
    (job_id,) = enqueue(database, kind, [{"ms": 60000}], register=register)
    log = tmp_path / "worker.log"
    worker = start_worker(database, log, "--grace", "1", env=ledger)
    try:
        wait_until(lambda: read_ledger(ledger["JOBTABLE_TEST_LEDGER"]), 30, "the job starting")
        signalled = time.monotonic()
        assert stop(worker) == 0
    finally:
        stop(worker)
    (start, stopped) = read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
    assert (start[0], stopped[0]) == ("start", "stopped")
    told_after = stopped[4] - signalled
    print(f"told to stop {told_after:.2f}s after SIGTERM with --grace 1")
    assert told_after >= 1.0  # not before the grace period ran out
    ((status, error),) = query(database, "SELECT status, error FROM jobs WHERE id = %s", (job_id,))
    assert (status, error) == (settled, "interrupted by restart" if settled == "failed" else None)


def test_a_second_signal_tells_running_jobs_to_stop_at_once(database, tmp_path, ledger):
    enqueue(database, "ledgered", [{"ms": 60000}], register=register)
    log = tmp_path / "worker.log"
    worker = start_worker(database, log, "--grace", "600", env=ledger)
    try:
        wait_until(lambda: read_ledger(ledger["JOBTABLE_TEST_LEDGER"]), 30, "the job starting")
        worker.send_signal(signal.SIGTERM)
        wait_until(lambda: "letting running ones finish" in log.read_text(), 30, "phase one")
        assert [event for event, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])] == ["start"]
        assert stop(worker, signal.SIGINT, within=30) == 0  # long before the 600 s grace
    finally:
        stop(worker)
    assert [event for event, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])] == [
        "start",
        "stopped",
    ]


def test_a_dead_runners_forked_child_does_not_keep_it_alive(database, tmp_path, ledger):
    """A handler forks a child that outlives it; kill -9 of the runner still settles its job."""
    (job_id,) = enqueue(database, "forks", [{"ms": 60000}], register=register)
    victim_log, survivor_log = tmp_path / "victim.log", tmp_path / "survivor.log"
    victim = start_worker(database, victim_log, env=ledger)
    survivor = None
    child = None
    try:
        wait_until(
            lambda: any(e == "start" for e, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])),
            30,
            "the job starting",
        )
        child = int(read_ledger(ledger["JOBTABLE_TEST_LEDGER"])[0][0].split(":")[1])
        survivor = start_worker(database, survivor_log, env=ledger)
        wait_for_start(survivor_log)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        os.kill(child, 0)  # the child lives on, holding what it inherited
        took = wait_until(
            lambda: (
                query(database, "SELECT status FROM jobs WHERE id = %s", (job_id,)) == [("failed",)]
            ),
            within=30,
            what="the dead runner's job being settled",
        )
        print(f"kill -9 to settled with a forked child alive: {took:.2f}s")
        os.kill(child, 0)
    finally:
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        stop(victim)
        if survivor is not None:
            stop(survivor)
