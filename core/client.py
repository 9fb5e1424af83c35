"""The embedding API over one store: enqueue, read, wait for, follow and operate on jobs.

No workers: a Runner holds one (``runner.client``) and hears through ``LocalWorkers``
what it stored; a process that only enqueues and reads opens one on its own.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import cattrs

from jobtable.core import codec
from jobtable.core.announcer import Announcer
from jobtable.core.around import around
from jobtable.core.builtins import Builtins, register_builtins
from jobtable.core.changes import JobChanges
from jobtable.core.client_operations import LocalWorkers, OperatorActions
from jobtable.core.clock import Clock
from jobtable.core.enqueue_options import WHILE_ACTIVE, EnqueueOptions
from jobtable.core.errors import InvalidPayloadError, JobNotFoundError, UnknownKindError
from jobtable.core.following import (
    LOOK_AGAIN,
    check_wait_timeout,
    finished_or_wait,
    job_versions,
)
from jobtable.core.idempotency import KeepAnswer
from jobtable.core.ids import JobIdGenerator, could_exist, unix_ms
from jobtable.core.job_history import JobEvents
from jobtable.core.jobs import Enqueued, Job, JobDetail, NewJob, Retention
from jobtable.core.kind_spec import EncodedJob
from jobtable.core.kinds import KindRegistry
from jobtable.core.ports import JobStore
from jobtable.core.retention import Pruner
from jobtable.core.tracing import Tracing, default_tracing
from jobtable.core.waiting import why_waiting


def _nothing() -> None:
    return None


class Client(OperatorActions):
    """Enqueue, read, wait for, follow and operate on the jobs of one store, for any process."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        *,
        changes: JobChanges | None = None,
        workers: LocalWorkers | None = None,
        converter: cattrs.Converter | None = None,
        logger: logging.Logger | None = None,
        holder: str | None = None,
        retention: Retention | None = None,
        hear_elsewhere: Callable[[], None] = _nothing,
        claimer: object | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        """A client over ``store``; register the kinds it may enqueue on ``client.kinds``.

        ``changes`` is the hub readers wait on (default: a new one); every
        write through ``store`` pokes it. ``workers``: the pool of this process
        to tell of what it stores (default: none). ``holder`` names who prunes
        (a runner's id; default: a new id) by ``retention`` (default: succeeded
        kept 7 days, failed 30). ``hear_elsewhere`` is called before each wait
        or follow: it makes other processes' changes reach ``changes`` (a
        store's watcher, started on first use). ``claimer``: who claims the
        jobs this client stores (its runner), never woken by its own writes.
        ``tracing``: where enqueues are traced (default: OpenTelemetry when installed).
        """
        self.changes = JobChanges() if changes is None else changes
        """Readers waiting for a job to change (long-polls, event streams) subscribe here."""
        self.store = around(store, Announcer(self.changes, claimer=claimer or self))
        """The store as this client writes it: each change is announced to ``changes``."""
        self._clock = clock
        self._logger = logger or logging.getLogger("jobtable.client")
        self._workers = LocalWorkers() if workers is None else workers
        self._converter = codec.make_converter() if converter is None else converter
        self._ids = JobIdGenerator()
        self._hear_elsewhere = hear_elsewhere
        self.tracing = default_tracing() if tracing is None else tracing
        """Where each enqueue's ``send`` spans go (core/tracing.py)."""
        self.kinds = KindRegistry(self._converter, self._store_jobs)
        """Register kinds here; their handles enqueue through this client."""
        self.builtins: Builtins = register_builtins(self.kinds)
        self.pruner = Pruner(
            self.store,
            clock,
            self._logger,
            holder=holder or self._ids.next_id(unix_ms(clock.now())),
            retention=retention or Retention(),
        )
        """Deletes the finished jobs ``retention`` no longer keeps (``prune``)."""

    @property
    def converter(self) -> cattrs.Converter:
        """What payloads are structured and unstructured with."""
        return self._converter

    # -- enqueue -----------------------------------------------------------

    def enqueue(
        self,
        kind: str,
        payload: Any,
        options: EnqueueOptions | None = None,
        *,
        keep: KeepAnswer | None = None,
    ) -> Enqueued:
        """Enqueue a job by kind name with a decoded JSON payload, as a typed handle would.

        The payload is validated exactly as the kind's handle validates it,
        and stored as the handle would store it. Raises UnknownKindError,
        InvalidPayloadError (naming each field) or InvalidOptionError, storing
        nothing. With ``keep``, an idempotency key's answer is kept in the same
        transaction.
        """
        (enqueued,) = self._store_jobs([self.encode(kind, payload, options)], keep=keep)
        return enqueued

    def enqueue_batch(
        self, jobs: Sequence[EncodedJob], *, keep: KeepAnswer | None = None
    ) -> list[Enqueued]:
        """Store jobs made by ``encode`` in one transaction: all of them, or none (with
        ``keep``'s answer)."""
        return self._store_jobs(jobs, keep=keep)

    def encode(self, kind: str, payload: Any, options: EnqueueOptions | None = None) -> EncodedJob:
        """Check and encode one job by kind name, storing nothing (for ``enqueue_batch``)."""
        spec = self.kinds.get(kind) if isinstance(kind, str) else None
        if spec is None:
            raise UnknownKindError(str(kind))
        try:
            structured = codec.structure_payload(self._converter, payload, spec.payload_type)
            encoded = codec.encode_payload(self._converter, structured)
        except codec.PayloadDecodeError as error:
            raise InvalidPayloadError(kind, error.problems) from None
        except codec.NotStrictJsonError as error:
            raise InvalidPayloadError(kind, (error.problem,)) from None
        limit_key, rate_key, fair_key = spec.keys(structured)
        return EncodedJob(
            spec=spec,
            payload=encoded,
            options=(options or EnqueueOptions()).check(now=self._clock.now()),
            limit_key=limit_key,
            rate_key=rate_key,
            fair_key=fair_key,
        )

    def _store_jobs(
        self,
        requests: Sequence[EncodedJob],
        *,
        connection: Any = None,
        keep: KeepAnswer | None = None,
    ) -> list[Enqueued]:
        """Store checked jobs (one, many in one transaction, or one on the caller's connection)."""
        now = self._clock.now()  # one reading: the ids' time and the stored time agree
        if self.tracing.enabled:
            return self._store_traced(requests, now, connection=connection, keep=keep)
        if len(requests) == 1 and keep is None:  # the common case, without the lists
            job = self.new_job(requests[0], now)
            if connection is None:
                stored = self.store.create(job, now=now)
            else:
                stored = self.store.create_in(connection, job, now=now)
            if not stored.duplicate and (job.run_at is None or job.run_at <= now):
                self._workers.jobs_due(1)
            else:
                self._workers.job_scheduled()  # as below: a scheduled job may fall due first
            return [stored]
        return self._store_new([self.new_job(request, now) for request in requests], now,
                               connection=connection, keep=keep)  # fmt: skip

    def _store_traced(
        self,
        requests: Sequence[EncodedJob],
        now: datetime.datetime,
        *,
        connection: Any,
        keep: KeepAnswer | None,
    ) -> list[Enqueued]:
        """Store jobs, each under a ``send`` span whose context is stored with it."""
        jobs, sending = self.tracing.sending([self.new_job(request, now) for request in requests])
        try:
            enqueued = self._store_new(jobs, now, connection=connection, keep=keep)
        except BaseException:
            sending.end(None)
            raise
        sending.end(enqueued)
        return enqueued

    def _store_new(
        self,
        jobs: list[NewJob],
        now: datetime.datetime,
        *,
        connection: Any,
        keep: KeepAnswer | None,
    ) -> list[Enqueued]:
        if connection is not None:
            if len(jobs) != 1:
                raise ValueError("enqueue on a connection takes one job at a time")
            enqueued = [self.store.create_in(connection, jobs[0], now=now)]
        elif len(jobs) == 1:
            enqueued = [self.store.create(jobs[0], now=now, keep=keep)]
        else:
            enqueued = self.store.create_many(jobs, now=now, keep=keep) if jobs else []
        due_now = sum(
            1
            for job, stored in zip(jobs, enqueued, strict=True)
            if not stored.duplicate and (job.run_at is None or job.run_at <= now)
        )
        if due_now:
            self._workers.jobs_due(due_now)
        if len(enqueued) > due_now:
            self._workers.job_scheduled()  # a scheduled job may fall due before any known
        return enqueued

    def new_job(self, request: EncodedJob, now: datetime.datetime) -> NewJob:
        """The row to store for a checked job created ``now``: a new id, the kind's defaults
        where its options say nothing, its unique key."""
        spec, options = request.spec, request.options
        unique = spec.unique or WHILE_ACTIVE
        unique_key, while_active = unique.key(options.unique_key, request.payload, now)
        return NewJob(
            id=self._ids.next_id(unix_ms(now)),
            kind=spec.name,
            payload=request.payload,
            max_attempts=spec.policy.max_attempts,
            retry=spec.policy,
            queue=options.queue or spec.queue,
            priority=spec.priority if options.priority is None else options.priority,
            run_at=options.due(now),
            timeout=spec.timeout if options.timeout is None else options.timeout,
            unique_key=unique_key,
            unique_while_active=while_active,
            key_until=None if while_active else unique.held_until(now),
            limit_key=request.limit_key,
            rate_key=request.rate_key,
            fair_key=request.fair_key,
        )

    # -- reads -------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        """The job with ``job_id`` as shown to anyone (its ``result`` decoded), or None."""
        return self.store.get(job_id) if could_exist(job_id) else None

    def detail(self, job_id: str) -> JobDetail | None:
        """The job's detail (its job as ``get`` gives it, its attempts) and, when it is not
        running, why it waits (``waiting``, plain sentences); None when there is no such job."""
        detail = self.store.detail(job_id) if could_exist(job_id) else None
        if detail is None:
            return None
        spec = self.kinds.get(detail.job.kind)
        now = self._clock.now()
        waiting = why_waiting(
            detail,
            now=now,
            paused=self.store.paused_queues(),
            runners=self.store.runners(),
            ahead=lambda: self.store.jobs_ahead(detail),
            limit=None if spec is None else spec.limit,
            running=lambda: self.store.running_alike(job_id),
            rate=None if spec is None else spec.rate,
            starts=lambda since: self.store.starts_alike(job_id, since=since),
            queue_use=lambda: self.store.queue_use(detail.queue, now=now),
        )
        return attrs.evolve(detail, waiting=tuple(waiting))

    def events(self, job_id: str, after: int | None = None) -> JobEvents | None:
        """The job's changes after version ``after`` (None: all it keeps, from its creation)."""
        return self.store.events(job_id, after=after) if could_exist(job_id) else None

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """The job once it has finished (succeeded or failed, cancelled included).

        Woken by each change to it, from this process or another. Raises
        TimeoutError when it has not finished within ``timeout`` seconds (None:
        waits for good), JobNotFoundError when there is no such job (or it is
        pruned meanwhile).
        """
        check_wait_timeout(timeout)
        if not could_exist(job_id):
            raise JobNotFoundError(job_id)
        self._hear_elsewhere()
        deadline = None if timeout is None else self._clock.monotonic() + timeout
        with self.changes.subscribe(job_id) as subscription:
            while True:
                left = None if deadline is None else deadline - self._clock.monotonic()
                looked = finished_or_wait(job_id, self.store.get(job_id), timeout, left)
                if isinstance(looked, Job):
                    return looked
                subscription.wait(looked, clock=self._clock)

    def follow(self, job_id: str) -> Iterator[Job]:
        """Each version of the job, in order, until it finishes: the last one is finished.

        Every change is read from the job's kept history, so none is skipped
        however fast they come; a reader behind it gets the current state
        first. Raises JobNotFoundError (at the first ``next``) when there is no
        such job, or it is pruned meanwhile.
        """
        if not could_exist(job_id):
            raise JobNotFoundError(job_id)
        self._hear_elsewhere()
        with self.changes.subscribe(job_id) as subscription:
            yield from job_versions(
                job_id,
                lambda after: self.store.events(job_id, after=after),
                lambda: subscription.wait(LOOK_AGAIN, clock=self._clock),
            )
