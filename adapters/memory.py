"""A real, thread-safe JobStore in memory.

It passes the same contract suite as SQLite and PostgreSQL, so core tests and
users' own feature tests can rely on it behaving like the databases. Nothing
survives the process, which is the point.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from jobtable.adapters.batched_calls import BatchedCalls
from jobtable.adapters.memory_claims import MemoryClaims
from jobtable.adapters.memory_held_back import MemoryHeldBack
from jobtable.adapters.memory_history import MemoryHistory
from jobtable.adapters.memory_limits import limited_due
from jobtable.adapters.memory_operations import MemoryOperations
from jobtable.adapters.memory_reads import MemoryReads
from jobtable.adapters.memory_registry import MemoryRegistry
from jobtable.adapters.memory_state import (
    SCHEDULED,
    _Row,
    _stamp,
)
from jobtable.core.batch import Batch, BatchDone
from jobtable.core.idempotency import KeepAnswer
from jobtable.core.jobs import (
    Claim,
    Enqueued,
    NewJob,
    Recovered,
)
from jobtable.core.limits import smallest
from jobtable.core.liveness import (
    Settlement,
)
from jobtable.core.outcome import Fail, Outcome, RunAgain, Succeed
from jobtable.core.status import Status


class MemoryStore(
    BatchedCalls,
    MemoryClaims,
    MemoryOperations,
    MemoryReads,
    MemoryHeldBack,
    MemoryRegistry,
    MemoryHistory,
):
    # -- enqueue -----------------------------------------------------------

    def create(
        self, job: NewJob, *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> Enqueued:
        with self._lock:
            enqueued = self._insert(job, now)
            self._keep(keep, [enqueued])
            return enqueued

    def create_many(
        self, jobs: Collection[NewJob], *, now: datetime.datetime, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        with self._lock:
            ids = [job.id for job in jobs]
            if len(set(ids)) != len(ids) or any(job_id in self._rows for job_id in ids):
                raise ValueError("a job with one of these ids already exists")
            enqueued = [self._insert(job, now) for job in jobs]
            self._keep(keep, enqueued)
            return enqueued

    def _keep(self, keep: KeepAnswer | None, enqueued: list[Enqueued]) -> None:
        if keep is not None:
            status, body = keep.answer(enqueued)
            self._answer(keep.key, status, body)

    def create_in(self, connection: Any, job: NewJob, *, now: datetime.datetime) -> Enqueued:
        raise TypeError("the in-memory store has no database connection to enqueue on")

    def _insert(self, job: NewJob, now: datetime.datetime) -> Enqueued:
        if job.id in self._rows:
            raise ValueError(f"job {job.id} already exists")
        if job.unique_key is not None:
            holder = self._unique.get((job.kind, job.unique_key))
            if holder is not None:
                return Enqueued(holder, duplicate=True)
            self._unique[(job.kind, job.unique_key)] = job.id
        stamp = _stamp(now)
        run_at = _stamp(job.run_at or now)
        row = _Row(
            id=job.id,
            kind=job.kind,
            status=SCHEDULED if run_at > stamp else Status.QUEUED,
            payload=job.payload,
            created_at=stamp,
            updated_at=stamp,
            run_at=run_at,
            queue=job.queue,
            priority=job.priority,
            policy=job.policy,
            timeout=job.timeout,
            unique_key=job.unique_key,
            unique_while_active=job.unique_while_active,
            key_until=None if job.key_until is None else _stamp(job.key_until),
            limit_key=job.limit_key,
            rate_key=job.rate_key,
            fair_key=job.fair_key,
            trace_context=job.trace_context,
        )
        self._rows[job.id] = row
        self._file(row)
        return Enqueued(job.id)

    # -- outcomes ----------------------------------------------------------

    def publish(self, claim: Claim, *, result: str, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            row.result = result
            row.updated_at = _stamp(now)
            self._note(row)
            return True

    def record(self, claim: Claim, outcome: Outcome, *, now: datetime.datetime) -> bool:
        with self._lock:
            row = self._held(claim)
            if row is None:
                return False
            self._apply(row, outcome, _stamp(now))
            return True

    def _apply(self, row: _Row, outcome: Outcome, stamp: str) -> None:
        if isinstance(outcome, Succeed):
            row.result = outcome.result
            self._finish(row, Status.SUCCEEDED, None, stamp)
            return
        row.attempt = max(row.attempt, 1)  # a job found running has had an attempt
        if isinstance(outcome, Fail):
            self._finish(row, Status.FAILED, outcome.code, stamp, outcome.error_class)
        else:
            self._run_again(row, outcome, stamp)

    def _run_again(self, row: _Row, outcome: RunAgain, stamp: str) -> None:
        self._log_attempt(row, outcome.code, stamp, outcome.error_class)
        row.snoozes += int(not outcome.counts_attempt)
        if not self._requeue_unless_cancelled(row, stamp):
            return
        if not outcome.counts_attempt:
            row.attempt -= 1
        due = _stamp(outcome.run_at)
        if due > stamp:  # due later: it waits for then; due at once: it keeps its place
            row.run_at = due
        row.status = SCHEDULED if due > stamp else Status.QUEUED
        row.last_code = outcome.code
        row.updated_at = stamp
        self._note(row)
        self._file(row)

    def run_batch(
        self,
        batch: Batch,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> BatchDone:
        stamp = _stamp(now)
        with self._lock:
            done = BatchDone(
                recorded=[self.record(claim, outcome, now=now) for claim, outcome in batch.outcomes]
            )
            for claim in batch.give_backs:
                row = self._rows.get(claim.job_id)
                if row is not None and row.held_by == runner_id:
                    self._give_back(row)
            for claim in batch.starts:
                row = self._rows.get(claim.job_id)
                start = (
                    row is not None
                    and row.held_by == claim.runner_id
                    and row.status is Status.QUEUED
                    and row.attempt + 1 == claim.attempt
                )
                if start and row is not None:
                    self._start(row, claim.runner_id, stamp)
                done.started.append(start)
            limited = {
                name: limit
                for name, limit in self._queue_limits.items()
                if queues is None or name in queues
            }
            rules = batch.served_rules(kinds, queues)
            if rules is not None and batch.claim:
                declared = (dict(row.info.limits) for row in self._runners.values())
                rows, opens_at = limited_due(
                    self._rows.values(),
                    limits=smallest(rules.limits, declared),
                    rates=rules.rates,
                    starts=self._starts,
                    paused=self._paused,
                    queues=queues,
                    wanted=batch.claim,
                    now=now if rules.clock is None else max(now, rules.clock()),
                    fair=rules.fair,
                    turns=self._fair_turns,
                    queue_limits=limited,
                    queue_starts=self._queue_starts,
                    kinds=kinds,
                )
                for row in sorted(rows, key=lambda row: row.order):  # as the SQL stores hand out
                    done.claimed.append(self._start(row, runner_id, stamp))
                if opens_at is not None:
                    done = attrs.evolve(done, rate_opens_at=opens_at)
            done = attrs.evolve(done, limited_queues=frozenset(self._queue_limits))
            if rules is not None and kinds is not None:  # claimed apart, never held ahead
                kinds = [kind for kind in kinds if kind not in rules.kinds_apart]
            for count, into, holding in (
                (batch.claim, done.claimed, False),
                (batch.hold, done.held, True),
            ):
                while len(into) < count and kinds != []:
                    row = self._first_due(kinds, queues)
                    if row is None:
                        break
                    if holding:
                        row.held_by = runner_id
                        into.append(self._claimed(row, runner_id, row.attempt + 1))
                    else:
                        into.append(self._start(row, runner_id, stamp))
            return done

    def give_back_held(self, runner_id: str) -> int:
        with self._lock:
            held = [row for row in self._rows.values() if row.held_by == runner_id]
            for row in held:
                self._give_back(row)
            return len(held)

    def _give_back(self, row: _Row) -> None:
        row.held_by = None
        if row.status is Status.QUEUED:
            self._file(row)  # claims find it again

    def put_back(
        self,
        claims: Collection[Claim],
        *,
        now: datetime.datetime,
        started: Mapping[Claim, object] | None = None,
    ) -> int:
        moved = 0
        with self._lock:
            for claim in claims:
                row = self._held(claim)
                if row is None or (started is not None and row.started_at != started.get(claim)):
                    continue
                row.attempt -= 1
                # It started when it did before this claim (never, before its first attempt).
                row.started_at = row.attempts_log[-1]["started_at"] if row.attempts_log else None
                moved += 1
                if not self._requeue_unless_cancelled(row, _stamp(now)):
                    continue
                row.status = Status.QUEUED
                row.updated_at = _stamp(now)
                self._note(row)
                self._file(row)
        return moved

    # -- cancellation, queues, detail ----------------------------------------

    # -- liveness ----------------------------------------------------------

    def settle_dead(
        self, settlements: Collection[Settlement], *, now: datetime.datetime
    ) -> Recovered:
        failed = requeued = 0
        with self._lock:
            for settlement in settlements:
                verdict = settlement.verdict
                if not self._evidence_holds(verdict):
                    continue
                for job, outcome in settlement.outcomes:
                    row = self._rows.get(job.claim.job_id)
                    if (
                        row is None
                        or row.status is not Status.RUNNING
                        or row.claimed_by != verdict.runner_id
                        or row.attempt != job.claim.attempt
                    ):
                        continue  # ended, or claimed again, meanwhile
                    self._apply(row, outcome, _stamp(now))
                    requeued += isinstance(outcome, RunAgain)
                    failed += isinstance(outcome, Fail)
                if verdict.runner_id is not None:
                    self.give_back_held(verdict.runner_id)
                    self._runners.pop(verdict.runner_id, None)
        return Recovered(failed=failed, requeued=requeued)

    # -- observing and operating ----------------------------------------------

    def close(self) -> None:
        pass

    def _held(self, claim: Claim) -> _Row | None:
        row = self._rows.get(claim.job_id)
        if (
            row is None
            or row.status is not Status.RUNNING
            or row.claimed_by != claim.runner_id
            or row.attempt != claim.attempt
        ):
            return None
        return row
