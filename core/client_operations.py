"""What a client does besides enqueueing and reading one job: an operator's actions (cancel,
retry, pause, prune), the lists and counts they read, and HTTP idempotency keys."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection

import attrs

from jobtable.core.bulk import (
    BATCH,
    BulkAction,
    BulkBatch,
    BulkFilter,
    BulkResult,
    action_filter,
    check_state_of,
)
from jobtable.core.clock import Clock
from jobtable.core.enqueue_options import InvalidOptionError, check_queue, check_text
from jobtable.core.held_back import HeldBack, total_by_queue
from jobtable.core.history import History, oldest_waiting, read_history
from jobtable.core.idempotency import Repeat, check_key, judge_repeat
from jobtable.core.ids import could_exist
from jobtable.core.jobs import (
    MAX_PAGE,
    CancelOutcome,
    Job,
    JobCount,
    JobFilter,
    JobPage,
    QueueState,
    Retention,
    RetryOutcome,
)
from jobtable.core.kinds import KindRegistry
from jobtable.core.limits import QueueLimit
from jobtable.core.liveness import RunnerRecord
from jobtable.core.ports import JobStore
from jobtable.core.retention import Pruner
from jobtable.core.schedules import StoredSchedule, next_run
from jobtable.core.states import State, check_state
from jobtable.core.status import Status


def _ignore(*_: object) -> None:
    return None


@attrs.frozen(kw_only=True)
class LocalWorkers:
    """What a client tells the worker pool of its own process (the Runner that holds it).

    A client on its own tells nobody: other processes' runners hear of its
    writes through the database (file events, NOTIFY).
    """

    jobs_due: Callable[[int], None] = _ignore
    """So many jobs are due now (stored, or queued again): wake that many idle workers."""
    job_scheduled: Callable[[], None] = _ignore
    """A job due later was stored: look again for the earliest due time."""
    cancel_requested: Callable[[str], None] = _ignore
    """A running job was asked to stop: tell its handler, if it runs here."""
    queue_resumed: Callable[[], None] = _ignore
    """A queue was resumed: its jobs may be claimed again."""


class OperatorActions:
    """The client's operator side; ``Client`` sets the store, clock, workers and pruner."""

    store: JobStore
    pruner: Pruner
    kinds: KindRegistry
    _clock: Clock
    _workers: LocalWorkers
    _logger: logging.Logger

    # -- cancel and retry --------------------------------------------------

    def cancel(self, job_id: str) -> tuple[CancelOutcome, Job] | None:
        """Cancel a job: at once when it is not running; a running one's handler is told to stop.

        Returns what happened and the job as it is now, or None when there is
        no such job. A running job is recorded ``cancelled`` when its handler
        stops (within a second in whichever process runs it), unless it
        returned a result first. A job that finished otherwise is left as it
        is (REFUSED).
        """
        if not could_exist(job_id):
            return None
        outcome = self.store.cancel(job_id, now=self._clock.now())
        if outcome is None:
            return None
        # Read before a handler here is told to stop: it may stop and record its outcome at
        # once, and the answer to a request is the job as the request left it (running).
        job = self.store.get(job_id)
        if outcome is CancelOutcome.REQUESTED:
            self._workers.cancel_requested(job_id)  # ours: no need to wait for a sweep
        if job is None:
            return None
        return outcome, job

    def retry(self, job_id: str) -> tuple[RetryOutcome, Job] | None:
        """Queue a failed job again (any code, ``cancelled`` and ``timed_out`` too) with one
        more attempt allowed; its earlier attempts stay in its detail.

        REFUSED when it has not failed; None when there is no such job.
        """
        if not could_exist(job_id):
            return None
        outcome = self.store.retry(job_id, now=self._clock.now())
        if outcome is None:
            return None
        if outcome is RetryOutcome.RETRIED:
            self._workers.jobs_due(1)
        job = self.store.get(job_id)
        return None if job is None else (outcome, job)

    def bulk(
        self,
        action: BulkAction,
        which: BulkFilter,
        *,
        dry_run: bool = False,
        by: str = "python",
        through: str | None = None,
    ) -> BulkResult:
        """Cancel or retry every job ``which`` matches that ``action`` applies to, up to the
        newest job now (or up to ``through``: a dry run's), in batches of ``BATCH``
        (core/bulk.py); with ``dry_run``, count them.

        Each batch is one transaction; the action and its counts are logged (``by`` says
        from where: http, dashboard, cli, python). Raises InvalidOptionError for a state the
        action cannot change.
        """
        if through is not None and not could_exist(through):
            raise InvalidOptionError("through", "must be a job's id")
        check_state_of(action, which)
        if through is None:
            newest = self.store.list_jobs(JobFilter(), limit=1, after=None)
            if not newest:
                return BulkResult(matched=0, changed=0)
            through = newest[0].id
        listed = action_filter(action, which, through=through)
        what = f"bulk {action.value}{' (dry run)' if dry_run else ''}"
        if not dry_run:  # a count changes nothing: its one line says what it counted
            self._logger.info("%s begins by=%s filter=%s", what, by, which.described())
        began = time.monotonic()
        matched = changed = 0
        if dry_run:
            matched = self.store.count_jobs(listed)
        after = None
        while not dry_run:
            batch = self._bulk_batch(action, listed, after)
            matched += batch.matched
            changed += len(batch.changed) + len(batch.stop_requested)
            if batch.matched < BATCH or batch.last_id is None:
                break
            after = batch.last_id
        self._logger.info(
            "%s done by=%s filter=%s matched=%d changed=%d seconds=%.3f",
            what,
            by,
            which.described(),
            matched,
            changed,
            time.monotonic() - began,
        )
        return BulkResult(matched=matched, changed=changed, through=through)

    def _bulk_batch(self, action: BulkAction, which: JobFilter, after: str | None) -> BulkBatch:
        now = self._clock.now()
        if action is BulkAction.CANCEL:
            batch = self.store.cancel_jobs(which, after=after, limit=BATCH, now=now)
            for job_id in batch.stop_requested:
                self._workers.cancel_requested(job_id)  # ours: no need to wait for a sweep
        else:
            batch = self.store.retry_jobs(which, after=after, limit=BATCH, now=now)
            if batch.changed:
                self._workers.jobs_due(len(batch.changed))
        return batch

    # -- queues and runners ------------------------------------------------

    def queues(self, held_back: list[HeldBack] | None = None) -> list[QueueState]:
        """Every queue that holds jobs or is paused or limited, with its jobs by public status,
        its limits, and how many of its due jobs a limit holds back now (its own, or of the
        kinds registered here; ``held_back`` when just read)."""
        states = self.store.queues()
        held = total_by_queue(self.held_back() if held_back is None else held_back)
        return [attrs.evolve(state, held_back=held.get(state.name, 0)) for state in states]

    def held_back(self) -> list[HeldBack]:
        """Due jobs that limits hold back now, by kind, queue and limit type (the limited
        queues', and those of the kinds registered here)."""
        rules = self.kinds.claim_rules()
        return self.store.held_back(rules.limits, rules.rates, now=self._clock.now())

    def pause_queue(self, name: str) -> None:
        """Stop every runner claiming from ``name`` (its running jobs go on); persisted."""
        self.store.set_queue_paused(check_queue(name), paused=True, now=self._clock.now())

    def resume_queue(self, name: str) -> None:
        self.store.set_queue_paused(check_queue(name), paused=False, now=self._clock.now())
        self._workers.queue_resumed()

    def set_queue_limit(self, name: str, limit: QueueLimit) -> None:
        """At most ``limit.running`` of ``name``'s jobs running at once and ``limit.rate`` started
        in any window, across every runner (``QueueLimit()``: none); persisted."""
        self.store.set_queue_limit(check_queue(name), limit, now=self._clock.now())
        self._workers.queue_resumed()  # a lifted limit lets its jobs run: look again

    def history(
        self, *, queue: str | None = None, kind: str | None = None, queues: Collection[str] = ()
    ) -> History:
        """The dashboard's charts: throughput and queue wait per minute over the last hour
        (of ``queue`` and ``kind``, None: all), each kind's hour, and the age of the oldest
        waiting job of each of ``queues``."""
        return read_history(self.store, self._clock.now(), queues=queues, queue=queue, kind=kind)

    def oldest_waiting(self, queues: Collection[str]) -> dict[str, float]:
        """Seconds each of ``queues`` holding a job due now has had its oldest one due."""
        return oldest_waiting(self.store, self._clock.now(), queues)

    def runners(self) -> list[RunnerRecord]:
        """Every live runner on the database, oldest first."""
        return self.store.runners()

    def schedules(self) -> list[StoredSchedule]:
        """Every periodic schedule a runner recorded at start, by name, with its next run
        after now (None when its expression cannot be read) and its last tick."""
        now = self._clock.now()
        return [
            attrs.evolve(stored, next_run=next_run(stored, now))
            for stored in self.store.schedules()
        ]

    # -- lists, counts and retention ---------------------------------------

    def list_jobs(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        queue: str | None = None,
        limit: int = 50,
        after: str | None = None,
        state: str | None = None,
        before: str | None = None,
        id_part: str | None = None,
    ) -> JobPage:
        """A page of jobs, newest first, that match every filter given, each with its state.

        ``status`` is a public status (queued includes jobs due later); ``state`` an
        operator's state (core/states.py); ``id_part`` the start or the end of an id (a
        search); ``limit`` is clamped to 1..500; ``after`` is the previous page's
        ``next_after``, ``before`` a page's ``newer_before`` (the page of newer jobs). Raises
        InvalidOptionError for an unknown status, or a kind, queue, id part or cursor that no
        job could have.
        """
        which = JobFilter(
            status=_public_status(status),
            kind=None if kind is None else check_text(kind, "kind"),
            queue=None if queue is None else check_queue(queue),
            state=_state(state),
            id_part=None if id_part is None else _id_part(id_part),
        )
        for name, cursor, end in (("after", after, "last"), ("before", before, "first")):
            if cursor is not None and not could_exist(cursor):
                raise InvalidOptionError(name, f"must be the id of the {end} job of a page")
        size = max(1, min(MAX_PAGE, int(limit)))
        if before is not None and after is None:
            found = self.store.list_jobs(which, limit=size + 1, after=None, before=before)
            page = tuple(reversed(found[:size]))
            return JobPage(
                jobs=page,
                next_after=page[-1].id if page else None,
                newer_before=page[0].id if len(found) > size else None,
            )
        found = self.store.list_jobs(which, limit=size + 1, after=after)
        page = tuple(found[:size])
        return JobPage(
            jobs=page,
            next_after=page[-1].id if len(found) > size else None,
            newer_before=page[0].id if after is not None and page else None,
        )

    def job_counts(self) -> list[JobCount]:
        """Jobs queued, scheduled and running, by queue and kind: cheap enough for every scrape."""
        return self.store.job_counts()

    def prune(self, retention: Retention | None = None) -> int | None:
        """Delete the finished jobs ``retention`` (default: the client's) no longer keeps.

        Returns how many, or None when another runner is pruning now.
        """
        return self.pruner.prune(retention)

    # -- idempotency keys (HTTP) -------------------------------------------

    def begin_idempotent(self, key: str, request_hash: str) -> Repeat | None:
        """Take an idempotency key for a request (None: go on, then ``keep_answer``), or
        say what a repeat of it gets: the first answer, "still in flight", or "reused".
        Raises InvalidOptionError for a key that is not 1 to 255 visible ASCII characters."""
        kept = self.store.begin_idempotent(check_key(key), request_hash, now=self._clock.now())
        return None if kept is None else judge_repeat(kept, request_hash)

    def keep_answer(self, key: str, status: int, body: str) -> None:
        """The answer to the request that took ``key``, replayed to its repeats for 24 h."""
        self.store.finish_idempotent(key, status=status, body=body)

    def forget_key(self, key: str) -> None:
        """Let ``key`` go: its request failed in a way a retry may fix (the database). A key
        whose answer was kept stays: its jobs were stored (the reply was lost after)."""
        self.store.drop_idempotent(key)


_ID_PART = re.compile(r"[0-9a-f-]{1,36}")


def _id_part(text: str) -> str:
    part = text.strip().lower()
    if not _ID_PART.fullmatch(part):
        raise InvalidOptionError("id", "must be a job id, or its start or end (hex digits)")
    return part


def _state(name: str | None) -> State | None:
    if name is None:
        return None
    try:
        return check_state(name)
    except ValueError as error:
        raise InvalidOptionError("state", str(error).removeprefix("state ")) from None


def _public_status(name: str | None) -> Status | None:
    if name is None:
        return None
    try:
        return Status(name)
    except ValueError:
        shown = ", ".join(status.value for status in Status)
        raise InvalidOptionError("status", f"must be one of {shown}") from None
