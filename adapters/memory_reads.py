"""The in-memory store's reads: jobs, details, history, lists, counts and queues."""

from __future__ import annotations

import collections
import datetime
import json
from typing import Any

import attrs

from jobtable.adapters.memory_state import (
    SCHEDULED,
    MemoryState,
    _parse,
    _parse_or_none,
    _stamp,
    _state,
    matching_rows,
    newest_first,
)
from jobtable.core.job_history import JobEvents, events_after
from jobtable.core.jobs import (
    AttemptRecord,
    Job,
    JobCount,
    JobDetail,
    JobFilter,
    QueueState,
    every_attempt,
)
from jobtable.core.limits import QueueLimit
from jobtable.core.schedules import StoredSchedule, tick_of_key
from jobtable.core.states import STATES
from jobtable.core.status import Status


class MemoryReads(MemoryState):
    def get(self, job_id: str) -> Job | None:
        with self._lock:
            row = self._rows.get(job_id)
            return None if row is None else self._public(row)

    def list_jobs(
        self, which: JobFilter, *, limit: int, after: str | None, before: str | None = None
    ) -> list[Job]:
        with self._lock:
            rows = newest_first(self._rows.values(), which, limit=limit, after=after, before=before)
            return [attrs.evolve(self._public(row), state=_state(row)) for row in rows]

    def count_jobs(self, which: JobFilter) -> int:
        with self._lock:
            return sum(1 for _ in matching_rows(self._rows.values(), which))

    def events(self, job_id: str, *, after: int | None) -> JobEvents | None:
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            floor = 0 if after is None else after
            kept = tuple(event for event in row.history if event.version > floor)
            return events_after(self._public(row), kept, after=after)

    def detail(self, job_id: str) -> JobDetail | None:
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            job = self._public(row)
            logged = tuple(
                AttemptRecord(
                    attempt=entry["attempt"],
                    runner_id=entry["runner"],
                    started_at=_parse_or_none(entry["started_at"]),
                    ended_at=_parse_or_none(entry["ended_at"]),
                    outcome=entry["outcome"],
                    error_class=entry.get("error_class"),
                )
                for entry in row.attempts_log
            )
            return JobDetail(
                job=job,
                queue=row.queue,
                priority=row.priority,
                run_at=_parse(row.run_at),
                attempt=row.attempt,
                max_attempts=row.max_attempts,
                created_at=_parse(row.created_at),
                started_at=_parse_or_none(row.started_at),
                finished_at=_parse_or_none(row.finished_at),
                timeout=row.timeout,
                unique_key=row.unique_key,
                cancel_requested=row.cancel_requested,
                claimed_by=row.claimed_by,
                attempts=every_attempt(
                    logged,
                    job=job,
                    attempt=row.attempt,
                    runner_id=row.claimed_by,
                    started_at=_parse_or_none(row.started_at),
                    finished_at=_parse_or_none(row.finished_at),
                    error_class=row.error_class,
                ),
                last_code=row.last_code,
                snoozes=row.snoozes,
                payload=row.payload,
                state=_state(row),
            )

    def schedules(self) -> list[StoredSchedule]:
        with self._lock:
            listed = []
            for name, stored in sorted(self._stored_schedules.items()):
                ticks = [
                    (row.id, tick)
                    for row in self._rows.values()
                    if row.kind == stored.kind
                    and (tick := tick_of_key(name, row.unique_key)) is not None
                ]
                listed.append(
                    attrs.evolve(
                        stored,
                        queue_paused=stored.queue in self._paused,
                        last_tick=max(ticks)[1] if ticks else None,
                    )
                )
            return listed

    def jobs_ahead(self, detail: JobDetail) -> int:
        order = (detail.priority, _stamp(detail.run_at), detail.job.id)
        with self._lock:
            return sum(
                1
                for row in self._rows.values()
                if row.status is Status.QUEUED
                and row.kind == detail.job.kind
                and row.queue == detail.queue
                and row.order < order
            )

    def starts_alike(
        self, job_id: str, *, since: datetime.datetime
    ) -> tuple[list[datetime.datetime], list[datetime.datetime]]:
        with self._lock:
            job = self._rows.get(job_id)
            if job is None:
                return [], []
            alike = sorted(
                (at, key) for kind, key, at in self._starts if kind == job.kind and at > since
            )
            return [at for at, _ in alike], [at for at, key in alike if key == job.rate_key]

    def running_alike(self, job_id: str) -> tuple[int, int]:
        with self._lock:
            job = self._rows.get(job_id)
            if job is None:
                return (0, 0)
            alike = [
                row
                for row in self._rows.values()
                if row.status is Status.RUNNING and row.kind == job.kind
            ]
            return len(alike), sum(row.limit_key == job.limit_key for row in alike)

    def job_counts(self) -> list[JobCount]:
        counts: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
        with self._lock:
            for row in self._rows.values():
                stored = row.status.value if isinstance(row.status, Status) else row.status
                if stored in ("queued", SCHEDULED, "running"):
                    counts[(row.queue, row.kind, stored, _state(row))] += 1
        return [
            JobCount(queue=queue, kind=kind, status=status, count=count, state=state)
            for (queue, kind, status, state), count in sorted(counts.items())
        ]

    def row(self, job_id: str) -> dict[str, Any] | None:
        """Every column of the job's row, for inspection and tests."""
        with self._lock:
            row = self._rows.get(job_id)
            if row is None:
                return None
            columns = attrs.asdict(row, recurse=False)
            columns["max_attempts"] = row.max_attempts
            columns["retry"] = row.policy.to_json()
            columns["attempts_log"] = json.dumps(row.attempts_log) if row.attempts_log else None
            del columns["policy"]
            return columns

    def queues(self) -> list[QueueState]:
        with self._lock:
            counts: dict[str, dict[str, int]] = {}  # queues that hold a job or a pause
            states: dict[str, dict[str, int]] = {}
            named = self._paused | self._queue_limits.keys()
            for name in named | {row.queue for row in self._rows.values()}:
                counts[name] = {status.value: 0 for status in Status}
                states[name] = dict.fromkeys(STATES, 0)
            for row in self._rows.values():
                counts[row.queue][row.shown_status().value] += 1
                states[row.queue][_state(row)] += 1
            return [
                QueueState(
                    name=name,
                    paused=name in self._paused,
                    counts=counts[name],
                    limit=self._queue_limits.get(name, QueueLimit()),
                    states=states[name],
                )
                for name in sorted(counts)
            ]

    def paused_queues(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._paused)
