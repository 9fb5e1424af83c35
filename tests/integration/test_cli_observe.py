"""The CLI's observing and operating commands on both engines (issue 11): list with filters
and pages, retry, prune with retention flags, and get --follow printing every change of a
job run elsewhere, live and in order."""

# ruff: noqa: F811 - the database fixture comes from test_cli_lifecycle, and tests name it
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import attrs
import pytest

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import JobContext, Runner
from jobtable.core.ids import JobIdGenerator
from jobtable.core.jobs import NewJob
from jobtable.core.outcome import Fail
from jobtable.entrypoints.wiring import open_store
from tests.integration.test_cli_lifecycle import (  # noqa: F401 - fixtures
    clean_environment,
    cli,
    database,
)
from tests.support.observed import ObservedStore


@attrs.frozen
class Steps:
    count: int = 3


@attrs.frozen
class Step:
    step: int

    def public(self):
        return {"step": self.step}


GO = threading.Event()


def stepping(ctx: JobContext, payload: Steps) -> Step:
    ctx.publish(Step(step=1))
    GO.wait(30)
    for step in range(2, payload.count + 1):
        ctx.publish(Step(step=step))
    return Step(step=payload.count)


def register(kinds):
    kinds.register("steps", stepping, payload=Steps, failure_codes=["nope"])


KINDS = "tests.integration.test_cli_observe"


class Elsewhere:
    """A runner with its own store: another process, as far as the CLI knows."""

    def __init__(self, database: str) -> None:
        self.store = ObservedStore(
            open_store(database, synchronous="normal", now=SystemClock().now())
        )
        self.runner = Runner(self.store, SystemClock(), workers=1)
        register(self.runner.kinds)
        self.watcher = self.store.watch(self.runner.notice_jobs_from_elsewhere)
        self.runner.start()

    def close(self) -> None:
        GO.set()
        self.runner.stop_now()
        assert self.runner.join(timeout=10)
        self.watcher.stop()
        self.store.close()


@pytest.fixture
def elsewhere(database) -> Iterator[Elsewhere]:
    GO.clear()
    started = Elsewhere(database)
    yield started
    started.close()


def enqueue(capsys, database, *options: str, kind: str = "noop") -> str:
    code, out, err = cli(
        capsys, "enqueue", kind, *options, "--kinds", KINDS, "--database", database
    )
    assert code == 0, err
    return out.strip()


def listed(capsys, database, *filters: str) -> list[dict]:
    code, out, err = cli(capsys, "list", *filters, "--database", database)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_list_filters_and_pages_newest_first(capsys, database):
    ids = [enqueue(capsys, database, kind="noop") for _ in range(3)]
    other = enqueue(capsys, database, "--queue", "bulk", kind="noop")
    assert [job["id"] for job in listed(capsys, database)] == [other, *reversed(ids)]
    assert [job["id"] for job in listed(capsys, database, "--queue", "bulk")] == [other]
    assert listed(capsys, database, "--status", "failed") == []
    _, out, err = cli(capsys, "list", "--limit", "2", "--database", database)
    first = [json.loads(line)["id"] for line in out.splitlines()]
    assert first == [other, ids[2]]
    assert f"--after {ids[2]}" in err
    rest = listed(capsys, database, "--limit", "2", "--after", ids[2])
    assert [job["id"] for job in rest] == [ids[1], ids[0]]
    assert set(rest[0]) == {"id", "kind", "status", "result", "error", "state"}


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--status", "scheduled", "--status"),
        ("--limit", "0", "--limit"),
        ("--kind", "mail\udcff", "--kind: must be a string of 1 to 255 characters"),
        ("--kind", "a\nb", "--kind: must be a string of 1 to 255 characters"),
        ("--queue", "a\nb", "--queue: must be 1-64 letters"),
        ("--after", "\udcff", "--after: must be the id of the last job of a page"),
    ],
)
def test_a_bad_list_filter_exits_2_with_one_line(capsys, database, flag, value, says):
    code, out, err = cli(capsys, "list", flag, value, "--database", database)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and says in err


def test_retry_queues_a_failed_job_again_and_refuses_others(capsys, database):
    job_id = enqueue(capsys, database, kind="noop")
    code, out, err = cli(capsys, "cancel", job_id, "--database", database)
    assert code == 0
    code, out, err = cli(capsys, "retry", job_id, "--database", database)
    assert code == 0, err
    assert json.loads(out)["status"] == "queued"
    code, out, err = cli(capsys, "retry", job_id, "--database", database)
    assert code == 1 and "only a failed job" in err
    code, out, err = cli(capsys, "retry", "no-such-job", "--database", database)
    assert code == 1 and "no job" in err


def test_prune_deletes_what_the_retention_flags_no_longer_keep(capsys, database):
    store = open_store(database, synchronous="normal", now=SystemClock().now())
    long_ago = SystemClock().now() - datetime.timedelta(days=10)
    job_id = JobIdGenerator().next_id(int(long_ago.timestamp() * 1000))
    try:
        store.create(NewJob(id=job_id, kind="noop", payload="{}"), now=long_ago)
        running = store.claim_next(runner_id="gone", now=long_ago, kinds={"noop"})
        store.record(running.claim, Fail(code="boom"), now=long_ago)
    finally:
        store.close()
    code, out, err = cli(capsys, "prune", "--keep-failed", "30d", "--database", database)
    assert (code, out) == (0, "pruned 0 finished jobs\n")
    code, out, err = cli(capsys, "prune", "--keep-failed", "9d", "--database", database)
    assert (code, out) == (0, "pruned 1 finished jobs\n")
    code, out, err = cli(capsys, "get", job_id, "--database", database)
    assert code == 1 and "no job" in err
    code, out, err = cli(capsys, "prune", "--keep-failed", "soon", "--database", database)
    assert code == 2 and "--keep-failed" in err


def test_get_follow_replays_every_change_in_order_once_the_job_ran(capsys, database, elsewhere):
    GO.set()
    job_id = enqueue(capsys, database, '{"count": 4}', kind="steps")
    code, out, err = cli(capsys, "get", job_id, "--follow", "--database", database)
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(line["status"], line["result"]) for line in lines] == [
        ("queued", None),
        ("running", None),
        *(("running", {"step": step}) for step in (1, 2, 3, 4)),
        ("succeeded", {"step": 4}),
    ]


def test_get_follow_prints_changes_live_from_another_process(capsys, database, elsewhere):
    job_id = enqueue(capsys, database, '{"count": 3}', kind="steps")
    follower = subprocess.Popen(
        [sys.executable, "-m", "jobtable.entrypoints.cli", "get", job_id, "--follow",
         "--database", database, "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        seen = []
        for line in follower.stdout:
            seen.append(json.loads(line))
            if seen[-1]["result"] == {"step": 1}:
                GO.set()  # the handler goes on only once step 1 was printed: it came live
        assert follower.wait(30) == 0, follower.stderr.read()
    finally:
        follower.kill()
        follower.wait()
    assert [line["result"] for line in seen][-3:] == [{"step": 2}, {"step": 3}, {"step": 3}]
    assert seen[-1]["status"] == "succeeded"
    assert {"step": 1} in [line["result"] for line in seen]


def test_follow_of_an_unknown_job_exits_1(capsys, database):
    code, out, err = cli(capsys, "get", "no-such-job", "--follow", "--database", database)
    assert (code, out) == (1, "") and "no job" in err
    code, _, err = cli(capsys, "get", "x", "--follow", "--detail", "--database", database)
    assert code == 2 and "--follow" in err
