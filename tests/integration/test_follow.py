"""``enqueue --wait`` rendering of the versions core/following.py yields, and the watcher
that notices other processes' commits."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
from typing import Any

import attrs
import pytest

from jobtable.adapters.fake_clock import FakeClock
from jobtable.adapters.sqlite import SqliteStore
from jobtable.adapters.sqlite.watcher import DataVersionWatcher
from jobtable.core import Job, Status
from jobtable.core.changes import JobChanges
from jobtable.core.following import job_versions
from jobtable.core.job_history import JobEvent, JobEvents, events_after
from jobtable.entrypoints.follow import show_changes


def job(status: Status, result: Any = None, error: str | None = None) -> Job:
    return Job(id="j1", kind="countdown", status=status, result=result, error=error)


STATES = [
    job(Status.QUEUED),
    job(Status.RUNNING),
    job(Status.RUNNING, {"remaining": 2}),
    job(Status.RUNNING, {"remaining": 1}),
    job(Status.SUCCEEDED, {"remaining": 0, "counted": 2}),
]


class History:
    """A job's history, told a change at a time: each read sees one more, and pokes."""

    def __init__(self, states: list[Job], *, kept_from: int = 0) -> None:
        self.events = [JobEvent(version=n, job=state) for n, state in enumerate(states)]
        self.kept_from = kept_from
        self.shown = 1
        self.changes = JobChanges()
        self.subscription = self.changes.subscribe("j1")
        self.asked: list[int | None] = []

    def versions(self):
        """The job's versions as a client's ``follow`` yields them, from this history."""
        return job_versions("j1", self.read, lambda: self.subscription.wait(10))

    def read(self, after: int | None) -> JobEvents:
        self.asked.append(after)
        known = self.events[: self.shown]
        self.shown += 1
        self.changes.changed("j1")
        return events_after(
            attrs.evolve(known[-1].job, version=known[-1].version),
            tuple(e for e in known if e.version > (after or 0) and e.version >= self.kept_from),
            after=after,
        )


def test_piped_output_is_one_json_line_per_change_then_the_final_job():
    history = History(list(STATES))
    out, err = io.StringIO(), io.StringIO()
    final = show_changes(history.versions(), out=out, err=err, live=False)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(line["status"], line["result"]) for line in lines] == [
        ("queued", None),
        ("running", None),
        ("running", {"remaining": 2}),
        ("running", {"remaining": 1}),
        ("succeeded", {"remaining": 0, "counted": 2}),
    ]
    assert history.asked == [None, 0, 1, 2, 3]  # each read starts after the last one seen
    assert final.status is Status.SUCCEEDED
    assert err.getvalue() == ""


def test_a_follower_behind_the_kept_history_starts_again_from_the_current_state():
    history = History(list(STATES), kept_from=3)
    history.shown = 4  # the first read already sees versions 0-3, of which 0-2 are trimmed
    out, err = io.StringIO(), io.StringIO()
    show_changes(history.versions(), out=out, err=err, live=False)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(line["status"], line["result"]) for line in lines] == [
        ("running", {"remaining": 1}),
        ("succeeded", {"remaining": 0, "counted": 2}),
    ]


def test_a_terminal_gets_one_live_line_and_the_final_job_on_stdout():
    history = History(list(STATES))
    out, err = io.StringIO(), io.StringIO()
    show_changes(history.versions(), out=out, err=err, live=True)
    redraws = err.getvalue().split("\r\033[K")[1:]
    assert redraws == [
        "queued",
        "running",
        'running {"remaining": 2}',
        'running {"remaining": 1}',
        'succeeded {"remaining": 0, "counted": 2}\n',
    ]
    assert json.loads(out.getvalue())["status"] == "succeeded"


def test_the_store_version_ignores_its_own_commits_and_sees_another_process(tmp_path):
    from jobtable.core import NewJob

    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    before = store.data_version()
    store.create(NewJob(id="own", kind="noop", payload="{}"), now=FakeClock().now())
    assert store.data_version() == before
    other = sqlite3.connect(store.path)
    other.execute(
        "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
        " VALUES ('theirs', 'noop', 'queued', '{}', 'c', 'u')"
    )
    other.commit()
    other.close()
    assert store.data_version() != before
    store.close()


def test_the_watcher_notices_a_commit_made_right_after_it_started(tmp_path):
    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    changed = threading.Event()
    watcher = DataVersionWatcher(store.data_version, changed.set, interval=0.01).start()
    try:
        other = sqlite3.connect(store.path)  # no wait: the first reading was taken in start()
        other.execute(
            "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
            " VALUES ('theirs', 'noop', 'queued', '{}', 'c', 'u')"
        )
        other.commit()
        other.close()
        assert changed.wait(10)
    finally:
        watcher.stop()
        store.close()


def test_file_events_report_another_connections_commit(tmp_path):
    from jobtable.adapters.sqlite.file_events import FileEvents

    store = SqliteStore.open(tmp_path / "jobs.db", now=FakeClock().now())
    events = FileEvents.open(store.path)
    if events is None:
        pytest.skip("inotify is not available here: the watcher polls instead")
    try:
        assert events.wait(0) is False  # nothing written yet
        other = sqlite3.connect(store.path)
        other.execute(
            "INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)"
            " VALUES ('theirs', 'noop', 'queued', '{}', 'c', 'u')"
        )
        other.commit()
        other.close()
        assert events.wait(10) is True  # woken by the kernel, not by the timeout
        events.interrupt()
        assert events.wait(10) is False  # interrupted: returns at once, no write seen
    finally:
        events.close()
        store.close()


def test_a_failure_the_job_was_retried_from_does_not_end_the_follow():
    retried = [
        job(Status.QUEUED),
        job(Status.RUNNING),
        job(Status.FAILED, error="boom"),
        job(Status.QUEUED),
        job(Status.RUNNING),
        job(Status.SUCCEEDED, {"ok": True}),
    ]
    history = History(retried)
    history.shown = 4  # the first read already holds the failure and the retry after it
    out, err = io.StringIO(), io.StringIO()
    final = show_changes(history.versions(), out=out, err=err, live=False)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["status"] for line in lines] == [
        "queued", "running", "failed", "queued", "running", "succeeded",
    ]  # fmt: skip
    assert final.status is Status.SUCCEEDED
