"""Crash soak: worker processes killed with SIGKILL and restarted while jobs stream in.

    python -m tests.soak.crash_soak --engine sqlite --seconds 300      # full size, by hand
    python -m tests.soak.crash_soak --engine postgres --seconds 300    # needs JOBTABLE_TEST_POSTGRES

Full size: 5 minutes, 20,000 jobs of 0-300 ms, 4 processes x 4 workers on
SQLite or 3 x 8 on PostgreSQL, a random worker process killed 5-9.5 s after
the previous kill (its recovery and restart inside that time) and started again. Jobs are enqueued evenly over the run (20,000 per five
minutes, scaled to --seconds). Verdict at the end, and exit 1 if any fails:

- jobs lost: acknowledged by enqueue but missing, or not finished (must be 0);
- duplicate completions: a job whose outcome was recorded twice (must be 0);
- re-executions: runs past a job's first (at most the runs that killed
  processes cut short: an execution by a killed process whose attempt never
  completed, counted from the ledgers after the run, so a write the server
  finished just after the kill is counted too);
- recovery: from each kill until no job the killed process ran is still
  running (each must be under 3 s);
- over attempts: a job that ran more times than its attempts allow (must be 0).

Retries, schedules and cancels are in the mix: every fifth job fails its
first attempt with a retryable code, every seventh is due up to 2 s later,
and every eleventh is cancelled right after it is enqueued.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import attrs

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import EnqueueOptions, Runner
from jobtable.entrypoints.wiring import open_store
from tests.soak.soak_kinds import register
from tests.support.databases import connect, database_for, query
from tests.support.seeds import chosen_seed

REPO = Path(__file__).resolve().parents[2]
JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
SHAPES = {"sqlite": (4, 4), "postgres": (3, 8)}  # (processes, workers each)
JOBS_PER_FIVE_MINUTES = 20_000
RECOVERY_LIMIT = 3.0
"""Seconds from a kill until its jobs are settled: the guarantees page's bound (3 s, idle runners
sweeping at their slower pace included)."""
MAX_NAP_MS = 300
"""Jobs last 0-300 ms: at 67 a second, about ten run at any moment, so most kills cut some short."""


@attrs.define
class Verdict:
    engine: str
    seconds: float
    acknowledged: int = 0
    statuses: dict[str, int] = attrs.Factory(dict)
    lost: int = 0
    duplicate_completions: int = 0
    re_executions: int = 0
    over_attempts: int = 0
    running_at_kills: int = 0
    cut_short: int = 0
    kills: int = 0
    recoveries: list[float] = attrs.Factory(list)

    @property
    def passed(self) -> bool:
        return (
            self.lost == 0
            and self.duplicate_completions == 0
            and self.re_executions <= self.cut_short
            and self.over_attempts == 0
            and all(recovery < RECOVERY_LIMIT for recovery in self.recoveries)
        )

    def lines(self) -> list[str]:
        recoveries = sorted(self.recoveries)
        shown = (
            f"max {recoveries[-1]:.2f}s, median {statistics.median(recoveries):.2f}s"
            if recoveries else "none"
        )  # fmt: skip
        return [
            f"crash soak on {self.engine}, {self.seconds:.0f} s: {'PASS' if self.passed else 'FAIL'}",
            f"  jobs acknowledged      {self.acknowledged}  ({json.dumps(self.statuses)})",
            f"  jobs lost              {self.lost}  (must be 0)",
            f"  duplicate completions  {self.duplicate_completions}  (must be 0)",
            f"  re-executions          {self.re_executions}  (at most {self.cut_short}, the runs "
            f"killed processes cut short; {self.running_at_kills} seen running at the kills)",
            f"  over attempts          {self.over_attempts}  (must be 0: no job ran more times "
            "than its attempts allow)",
            f"  kills                  {self.kills}, {len(recoveries)} of them with jobs running",
            f"  recovery after a kill  {shown} (each under {RECOVERY_LIMIT:.0f}s)",
        ]


def create_ledger(database: str) -> None:
    """``executions`` (written by handlers) and ``completions`` (a trigger on every outcome)."""
    conn = connect(database)
    try:
        conn.execute(
            "CREATE TABLE executions (job_id TEXT NOT NULL, attempt INTEGER NOT NULL, pid INTEGER NOT NULL)"
        )
        conn.execute(
            "CREATE TABLE completions (job_id TEXT NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL)"
        )
        if database.startswith("postgresql://"):
            conn.execute(
                "CREATE FUNCTION record_completion() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF NEW.status IN ('succeeded', 'failed') THEN "
                "INSERT INTO completions VALUES (NEW.id, NEW.status, NEW.attempt); END IF; "
                "RETURN NEW; END $$"
            )
            conn.execute(
                "CREATE TRIGGER completion AFTER UPDATE OF status ON jobs "
                "FOR EACH ROW EXECUTE FUNCTION record_completion()"
            )
        else:
            conn.execute(
                "CREATE TRIGGER completion AFTER UPDATE OF status ON jobs "
                "WHEN NEW.status IN ('succeeded', 'failed') "
                "BEGIN INSERT INTO completions VALUES (NEW.id, NEW.status, NEW.attempt); END"
            )
    finally:
        conn.close()


class Fleet:
    """Worker processes, each a real ``jobtable worker``; one can be killed and replaced."""

    def __init__(self, database: str, workdir: Path, processes: int, workers: int) -> None:
        self._database = database
        self._workdir = workdir
        self._workers = workers
        self._started = 0
        self.processes = [self._start() for _ in range(processes)]

    def _start(self) -> subprocess.Popen:
        self._started += 1
        log = (self._workdir / f"worker-{self._started}.log").open("w")
        return subprocess.Popen(
            [JOBTABLE, "worker", "--workers", str(self._workers), "--kinds", "tests.soak.soak_kinds"],
            env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                 "JOBTABLE_DATABASE": self._database},
            stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip

    def kill(self, index: int) -> int:
        process = self.processes[index]
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        return process.pid

    def replace(self, index: int) -> None:
        self.processes[index] = self._start()

    def stop(self) -> list[int]:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        return [process.wait(60) for process in self.processes]


_RUNNING_FOR_PID = (
    "SELECT j.id FROM jobs j JOIN executions e ON e.job_id = j.id AND e.attempt = j.attempt "
    "WHERE j.status = 'running' AND e.pid = %s"
)


def wait_for(condition, within: float) -> float | None:
    """Seconds until ``condition()`` held, polling every 10 ms; None past ``within``."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        if condition():
            return time.monotonic() - started
        time.sleep(0.01)
    return None


def soak(
    database: str, engine: str, seconds: float, workdir: Path, seed: int | None = None
) -> Verdict:
    seed = chosen_seed(f"crash soak ({engine})", seed)
    chance = random.Random(seed)  # durations and kill moments, not secrets
    verdict = Verdict(engine=engine, seconds=seconds)
    store = open_store(database, synchronous="full", now=SystemClock().now())
    create_ledger(database)
    enqueuer = Runner(store, SystemClock())
    register(enqueuer.kinds)
    processes, workers = SHAPES[engine]
    fleet = Fleet(database, workdir, processes, workers)
    total = max(1, round(JOBS_PER_FIVE_MINUTES * seconds / 300))
    acknowledged: list[str] = []
    killed: list[int] = []

    def enqueue_up_to(count: int) -> None:
        while len(acknowledged) < count:
            number = len(acknowledged)
            kind = "soak_retry" if number % 5 == 0 else "soak"
            delay = chance.uniform(0, 2) if number % 7 == 0 else None
            job_id = enqueuer.enqueue(
                kind,
                {"milliseconds": chance.randint(0, MAX_NAP_MS)},
                EnqueueOptions(delay=delay),
            )
            acknowledged.append(job_id)
            if number % 11 == 0:
                enqueuer.cancel(job_id)

    try:
        started = time.monotonic()
        next_kill = started + chance.uniform(5, 9.5)
        while (elapsed := time.monotonic() - started) < seconds:
            enqueue_up_to(min(total, int(total * elapsed / seconds) + 1))
            if time.monotonic() >= next_kill:
                victim = chance.randrange(processes)
                pid = fleet.kill(victim)
                killed_at = time.monotonic()
                killed.append(pid)
                running = len(query(database, _RUNNING_FOR_PID, (pid,)))
                verdict.kills += 1
                verdict.running_at_kills += running
                if running:
                    settled = wait_for(
                        lambda pid=pid: not query(database, _RUNNING_FOR_PID, (pid,)), 30
                    )
                    recovery = time.monotonic() - killed_at if settled is not None else float("inf")
                    verdict.recoveries.append(recovery)
                fleet.replace(victim)
                # From the kill, not from the restart: a slow recovery or start on a loaded
                # machine never leaves a run with fewer kills than one per 10 s.
                next_kill = killed_at + chance.uniform(5, 9.5)
            time.sleep(0.01)  # pacing the stream of enqueues
        enqueue_up_to(total)
        wait_for(
            lambda: (
                query(
                    database,
                    "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'scheduled', 'running')",
                )
                == [(0,)]
            ),
            120,
        )
    finally:
        codes = fleet.stop()
        store.close()
    if codes != [0] * processes:
        print(f"worker exit codes at the end: {codes}", file=sys.stderr)

    verdict.acknowledged = len(acknowledged)
    stored = dict(query(database, "SELECT id, status FROM jobs"))
    verdict.lost = sum(
        1 for job_id in acknowledged if stored.get(job_id) not in ("succeeded", "failed")
    )
    verdict.statuses = {
        f"{status} {error or ''}".strip(): count
        for status, error, count in query(database, "SELECT status, error, COUNT(*) FROM jobs GROUP BY status, error")
    }  # fmt: skip
    verdict.duplicate_completions = len(
        query(database, "SELECT job_id FROM completions GROUP BY job_id HAVING COUNT(*) > 1")
    )
    ((runs, distinct),) = query(database, "SELECT COUNT(*), COUNT(DISTINCT job_id) FROM executions")
    verdict.re_executions = runs - distinct - retried_by_design(database)
    verdict.over_attempts = len(
        query(
            database,
            "SELECT e.job_id FROM executions e JOIN jobs j ON j.id = e.job_id "
            "GROUP BY e.job_id, j.max_attempts HAVING COUNT(*) > j.max_attempts",
        )
    )
    if killed:
        marks = ", ".join("%s" for _ in killed)
        ((verdict.cut_short,),) = query(
            database,
            f"SELECT COUNT(*) FROM executions e JOIN jobs j ON j.id = e.job_id "
            f"WHERE e.pid IN ({marks}) AND NOT (j.kind = 'soak_retry' AND e.attempt = 1) "
            "AND NOT EXISTS "
            "(SELECT 1 FROM completions c WHERE c.job_id = e.job_id AND c.attempt = e.attempt)",
            tuple(killed),
        )
    return verdict


def retried_by_design(database: str) -> int:
    """Runs of ``soak_retry`` jobs past their first that its first-attempt failure asked for."""
    ((count,),) = query(
        database,
        "SELECT COUNT(DISTINCT e.job_id) FROM executions e JOIN jobs j ON j.id = e.job_id "
        "WHERE j.kind = 'soak_retry' AND e.attempt >= 2",
    )
    return int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Kill worker processes while jobs run; print a verdict."
    )
    parser.add_argument("--engine", choices=sorted(SHAPES), default="sqlite")
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where logs and the SQLite file go"
    )
    args = parser.parse_args(argv)
    import tempfile

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="jobtable-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    with database_for(args.engine, workdir) as database:
        verdict = soak(database, args.engine, args.seconds, workdir, args.seed)
    print("\n".join(verdict.lines()))
    print(f"  logs in {workdir}")
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main())
