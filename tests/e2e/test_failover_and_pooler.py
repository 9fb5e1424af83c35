"""PostgreSQL as operators run it: a failover to a promoted standby, and PgBouncer in front.

Each test starts private servers in a temporary folder (tests/support/pg_cluster.py),
never touching the machine's shared server. Session advisory locks are not
replicated and do not survive a transaction pooler: liveness must hold through
both (a beat in the runners table, and a lock taken in a transaction).
"""

from __future__ import annotations

import signal

import pytest

from tests.e2e.conftest import wait_until
from tests.e2e.processes import enqueue, start_worker, stop, wait_for_start
from tests.e2e.trust_kinds import read_ledger, register
from tests.support.databases import query
from tests.support.pg_cluster import PgBouncer, primary_and_standby, private_cluster, temp_folder
from tests.support.postgres import postgres_url

pytestmark = pytest.mark.e2e

WRONG_VERDICTS = ("interrupted", "dead runner", "judged dead")


@pytest.fixture(autouse=True)
def _postgres_tests_run_where_postgresql_does():
    postgres_url()  # skip or fail as every PostgreSQL test does without a configured server


def succeeded(database: str, count: int) -> bool:
    return query(database, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'") == [(count,)]


def test_a_failover_to_a_promoted_standby_loses_nothing_and_judges_no_live_runner_dead(tmp_path):
    ledger = {"JOBTABLE_TEST_LEDGER": str(tmp_path / "ledger.txt")}
    with primary_and_standby() as (primary, standby):
        hosts = f"127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
        url = f"postgresql://postgres@{hosts}/test?target_session_attrs=read-write"
        long_job, *short = enqueue(
            url, "ledgered", [{"ms": 8000}] + [{"ms": 50}] * 20, register=register
        )
        logs = [tmp_path / f"runner-{n}.log" for n in range(2)]
        workers = [start_worker(url, log, env=ledger) for log in logs]
        try:
            for log in logs:
                wait_for_start(log)
            wait_until(
                lambda: any(
                    row[1] == long_job for row in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
                ),
                30,
                "the long job starting",
            )
            standby.wait_caught_up(primary)
            primary.stop("fast")  # a clean stop sends every commit to the standby first
            standby.promote()
            promoted = standby.url_for("test")
            wait_until(lambda: succeeded(promoted, 21), 120, "every job succeeding after failover")
            runners = query(promoted, "SELECT COUNT(*) FROM jobtable_runners")
        finally:
            for worker in workers:
                stop(worker)
    text = "".join(log.read_text() for log in logs)
    events = [(event, job_id) for event, job_id, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])]
    assert events.count(("start", long_job)) == events.count(("end", long_job)) == 1
    assert all(events.count(("start", job_id)) == 1 for job_id in short)
    assert runners == [(2,)]  # both still registered: neither was judged dead
    assert not [word for word in WRONG_VERDICTS if word in text], text[-3000:]
    assert "lock was lost and is taken again" in text  # the locks moved to the new primary


def test_workers_behind_pgbouncer_in_transaction_mode_run_each_job_once_and_settle_a_dead_one(
    tmp_path,
):
    ledger = {"JOBTABLE_TEST_LEDGER": str(tmp_path / "ledger.txt")}
    with (
        private_cluster() as cluster,
        temp_folder() as folder,
        PgBouncer.start(cluster, folder / "bouncer", pool_mode="transaction") as bouncer,
    ):
        pooled, direct = bouncer.url_for("test"), cluster.url_for("test")
        ids = enqueue(
            pooled, "ledgered", [{"ms": 20}] * 100, register=register, pooler="transaction"
        )
        pooler = ("--postgres-pooler", "transaction")
        logs = {name: tmp_path / f"{name}.log" for name in ("listening", "polling")}
        workers = {
            "listening": start_worker(
                pooled, logs["listening"], *pooler, "--postgres-listen-url", direct, env=ledger
            ),
            "polling": start_worker(pooled, logs["polling"], *pooler, env=ledger),
        }
        try:
            for log in logs.values():
                wait_for_start(log)
            wait_until(lambda: succeeded(direct, len(ids)), 120, "every job succeeding")
            (long_job,) = enqueue(
                pooled, "ledgered", [{"ms": 60000}], register=register, pooler="transaction"
            )
            wait_until(
                lambda: any(
                    row[1] == long_job for row in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])
                ),
                30,
                "the long job starting",
            )
            runner_pid = next(
                r[3] for r in read_ledger(ledger["JOBTABLE_TEST_LEDGER"]) if r[1] == long_job
            )
            victim = next(name for name, w in workers.items() if w.pid == runner_pid)
            workers[victim].send_signal(signal.SIGKILL)
            workers[victim].wait(10)
            took = wait_until(
                lambda: (
                    query(direct, "SELECT status FROM jobs WHERE id = %s", (long_job,))
                    == [("failed",)]
                ),
                within=60,
                what="the killed worker's job being settled through the pooler",
            )
            print(f"kill -9 behind PgBouncer to settled: {took:.2f}s")
        finally:
            for worker in workers.values():
                stop(worker)
    events = [(event, job_id) for event, job_id, *_ in read_ledger(ledger["JOBTABLE_TEST_LEDGER"])]
    assert all(events.count(("start", job_id)) == 1 for job_id in ids)
    assert "looking for jobs queued by other processes every 1.0s" in logs["polling"].read_text()
    assert "prepared statement" not in "".join(log.read_text() for log in logs.values())
