"""What a client does besides enqueueing and reading one job: an operator's actions (cancel,
retry, pause, prune), the lists and counts they read, and HTTP idempotency keys."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from jobtable.core.clock import Clock
from jobtable.core.enqueue_options import InvalidOptionError, check_queue, check_text
from jobtable.core.held_back import HeldBack, total_by_queue
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
    ) -> JobPage:
        """A page of jobs, newest first, that match every filter given, each with its state.

        ``status`` is a public status (queued includes jobs due later); ``state`` an
        operator's state (core/states.py);
        ``limit`` is clamped to 1..500; ``after`` is the previous page's
        ``next_after``. Raises InvalidOptionError for an unknown status, or a kind, queue
        or ``after`` that no job could have.
        """
        which = JobFilter(
            status=_public_status(status),
            kind=None if kind is None else check_text(kind, "kind"),
            queue=None if queue is None else check_queue(queue),
            state=_state(state),
        )
        if after is not None and not could_exist(after):
            raise InvalidOptionError("after", "must be the id of the last job of a page")
        size = max(1, min(MAX_PAGE, int(limit)))
        found = self.store.list_jobs(which, limit=size + 1, after=after)
        page = tuple(found[:size])
        return JobPage(jobs=page, next_after=page[-1].id if len(found) > size else None)

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
