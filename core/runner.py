"""The Runner: worker threads that claim queued jobs, run them and record each outcome; wired
in ``__init__``, started, stopped in two phases as River's and Oban's are, and joined.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Callable, Collection

from jobtable.core import codec
from jobtable.core.async_loop import EventLoop
from jobtable.core.attempts import Attempts
from jobtable.core.background import BackgroundLoops
from jobtable.core.batch import Batch
from jobtable.core.changes import JobChanges
from jobtable.core.client import Client
from jobtable.core.client_methods import ClientMethods
from jobtable.core.client_operations import LocalWorkers
from jobtable.core.clock import Clock
from jobtable.core.deadlines import Deadlines
from jobtable.core.enqueue_options import check_queue
from jobtable.core.errors import RunnerStateError
from jobtable.core.executor import Executor
from jobtable.core.hot_path import HotPath
from jobtable.core.ids import JobIdGenerator, unix_ms
from jobtable.core.in_this_thread import InThisThread
from jobtable.core.jobs import Retention
from jobtable.core.left_behind import LeftBehind
from jobtable.core.liveness import CHECK_INTERVAL, SWEEP_INTERVAL, RunnerInfo
from jobtable.core.observer import GuardedObserver, NoObserver, RunnerObserver
from jobtable.core.pool import WorkerPool, check_count, worker_slots
from jobtable.core.ports import JobStore
from jobtable.core.preemption import Preemption
from jobtable.core.registration import Registration
from jobtable.core.sweeper import Sweeper
from jobtable.core.tracing import Tracing
from jobtable.core.wakes import SchedulerWakes, WorkerWakes
from jobtable.core.worker import WorkerLoop

STOP_NOW_WAIT = 5.0
"""Seconds ``shutdown`` waits for handlers once they were told to stop."""


class Runner(ClientMethods, InThisThread):
    """A bounded pool of worker threads over one store, with its Client."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        *,
        workers: int = 2,
        async_workers: int = 100,
        queues: Collection[str] | None = None,
        logger: logging.Logger | None = None,
        sweep_interval: float | None = SWEEP_INTERVAL,
        check_interval: float | None = CHECK_INTERVAL,
        host: str | None = None,
        jitter: Callable[[], float] = random.random,
        left_behind_cap: int | None = None,
        observer: RunnerObserver | None = None,
        retention: Retention | None = None,
        prunes: bool = True,
        changes: JobChanges | None = None,
        watch: bool = True,
        tracing: Tracing | None = None,
    ) -> None:
        """A runner over ``store``; nothing runs until ``start``.

        ``workers=0`` makes an insert-only runner (a web tier): it enqueues,
        cancels and reads, and claims nothing. ``async_workers`` bounds the ``async def``
        handlers running at once (on the runner's event loop), ``workers`` the threads
        running the others. ``queues``: the queues it claims
        from (None: all). ``sweep_interval`` (seconds between beats and sweeps
        for dead runners) and ``check_interval`` (between checks of its own
        liveness lock) keep their defaults in production; None turns either
        thread off, for tests that drive them by hand. ``jitter`` draws the
        retry backoff's random share. ``left_behind_cap`` bounds the handlers
        that ignored a cancel or timeout and still run (default: the pool's
        size); past it their slots stay empty until some return. ``observer``
        hears of every job started and ended, claim error and recovery
        (core/observer.py). ``retention``: how long finished jobs are kept
        (default: succeeded 7 days, failed 30); a runner with workers prunes
        older ones every minute, one runner at a time, unless ``prunes`` is
        False (another runner of the process does it). ``changes``: the hub
        readers wait on (default: a new one); runners of one process may share
        one, so a reader hears of a job whichever runs it, and a runner of the
        work another's writes make for it. A runner with workers ``watch``es
        its store, when it can be watched, for jobs other connections commit
        (other processes, ``enqueue(..., connection=)``); runners sharing one
        watcher pass False. ``tracing``: where enqueues and attempts are traced (default:
        OpenTelemetry when it is installed, else nothing; core/tracing.py).
        """
        if store is None:
            raise ValueError("Runner needs a store")
        if clock is None:
            raise ValueError("Runner needs a clock")
        check_count(workers, "workers")
        check_count(async_workers, "async workers")
        async_workers = async_workers if workers else 0  # insert-only: nothing runs
        self._async_workers = async_workers
        self._clock = clock
        self._workers = workers
        self._queues = None if queues is None else frozenset(check_queue(q) for q in queues)
        self._host = host or os.uname().nodename
        self._log = log = logger or logging.getLogger("jobtable.runner")
        self._given_observer: RunnerObserver = observer or NoObserver()
        observed = self._given_observer if observer is None else GuardedObserver(observer, log)
        self.id = JobIdGenerator().next_id(unix_ms(clock.now()))
        """This runner's id, recorded on every job it claims."""
        self._prunes = prunes
        self._lifecycle = threading.Lock()  # guards _started
        self._started = False
        self._kinds: frozenset[str] = frozenset()  # what this runner claims: set at start
        self._rules = Batch()  # the limits, rates and fair keys its claims carry: set at start

        # What wakes the workers and the scheduler; the jobs the workers hold, and when
        # their handlers must stop. Whatever follows tells them.
        self._wakes = wakes = WorkerWakes(clock, workers=workers, async_workers=async_workers)
        self._scheduler_wakes = scheduler_wakes = SchedulerWakes()
        self._attempts = attempts = Attempts(workers + async_workers)  # async slots after
        deadlines = Deadlines()
        self._preemption = preemption = Preemption(
            clock, log, attempts=attempts, deadlines=deadlines, scheduler=scheduler_wakes
        )

        converter = codec.make_converter()
        self.client = Client(
            store,
            clock,
            changes=changes,
            workers=LocalWorkers(
                jobs_due=wakes.wake_for,
                job_scheduled=scheduler_wakes.look_again,
                cancel_requested=preemption.cancel_here,
                queue_resumed=self.notice_jobs_from_elsewhere,
            ),
            converter=converter,
            logger=log,
            holder=self.id,
            retention=retention,
            claimer=self,
            tracing=tracing,
        )
        """Enqueues, reads and operator actions (core/client.py): ``runner.get`` is its ``get``."""
        self.changes = self.client.changes
        """Readers waiting for a job to change (long-polls, event streams) subscribe here."""
        store = self._store = self.client.store  # every write announced to ``changes``
        self.kinds = self.client.kinds
        self.builtins = self.client.builtins

        # Claims, starts and outcomes: many per commit (core/hot_path.py), written with retries.
        hot = HotPath(
            store,
            clock,
            log,
            runner_id=self.id,
            workers=workers,
            wakes=wakes,
            scheduler=scheduler_wakes,
            attempts=attempts,
            may_claim=lambda: registration.may_claim(),
        )
        self._exchange = exchange = hot.exchange
        self._recorder = recorder = hot.recorder
        self._flusher = hot.flusher

        # This runner's registration, kept alive by its check and sweep threads.
        sweeper = Sweeper(
            store,
            clock,
            log,
            runner_id=self.id,
            attempts=attempts,
            in_hand=exchange.in_hand,
            left_running=recorder.left_running,
            preempt=preemption.preempt,
            wake_one=wakes.wake_one,
            observer=observed,
            interval=sweep_interval,
            jitter=jitter,
        )
        self._registration = registration = Registration(
            store,
            clock,
            log,
            runner_id=self.id,
            attempts=attempts,
            sweeper=sweeper,
            give_back_held=exchange.give_back_held,
            wake_all=wakes.liveness_confirmed,
            wanted=wakes.liveness_wanted,
            on_sweep=scheduler_wakes.pass_on_notice,
            check_interval=check_interval,
            sweep_interval=sweep_interval,
        )

        # The worker pool: each worker claims, runs and records attempts; async def handlers
        # run on the event loop, each awaited by an async slot's worker.
        self._event_loop = EventLoop(clock, log)
        self._executor = executor = Executor(
            clock,
            log,
            kinds=self.kinds,
            converter=converter,
            attempts=attempts,
            ahead=hot.ahead,
            began=exchange.began,
            recorder=recorder,
            preemption=preemption,
            registration=registration,
            wakes=wakes,
            scheduler=scheduler_wakes,
            observer=observed,
            jitter=jitter,
            event_loop=self._event_loop,
            tracing=self.client.tracing,
        )
        loop = WorkerLoop(
            log,
            attempts=attempts,
            wakes=wakes,
            exchange=exchange,
            recorder=recorder,
            registration=registration,
            executor=executor,
            scheduler=scheduler_wakes,
            observer=observed,
            threads=workers,
        )
        self._pool = pool = WorkerPool(
            clock,
            log,
            workers=workers,
            loop=loop,
            wakes=wakes,
            scheduler=scheduler_wakes,
            left_behind_cap=left_behind_cap,
        )
        left_behind = LeftBehind(
            log,
            attempts=attempts,
            preemption=preemption,
            executor=executor,
            pool=pool,
            wakes=wakes,
            limited=lambda kind: kind in self._rules.limits,
        )

        self._loops = BackgroundLoops(
            store,
            clock,
            log,
            kinds=self.kinds,
            new_job=self.client.new_job,
            workers=wakes,
            wakes=scheduler_wakes,
            deadlines=deadlines,
            act_on_deadlines=left_behind.act_on_deadlines,
            workers_gone=pool.none_left,
            pruner=self.client.pruner,
            notice=self.notice_jobs_from_elsewhere,
            watch=watch,
            tally=executor.tally,  # the dashboard's per-minute counts (core/minutes.py)
        )
        if workers:  # another runner of the process that makes work for it wakes it
            self.changes.listen_for_work(self, self._queues, self.notice_jobs_from_elsewhere)

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Register this runner (its liveness lock and its row), then start the workers.

        From then on it confirms its lock several times a second, beats and
        sweeps every half second, settling the jobs of runners whose death is
        certain. Raises RunnerStateError on a second call and StoreError when
        the store cannot be reached (nothing is started then).
        """
        with self._lifecycle:
            if self._started:
                raise RunnerStateError("the runner has already started")
            self._started = True
        self._freeze_kinds()
        if not self._workers:
            return  # insert-only: not registered, no claims, nobody to sweep for
        info = RunnerInfo(
            id=self.id,
            host=self._host,
            pid=os.getpid(),
            started_at=self._clock.now(),
            kinds=tuple(self.kinds.names()),
            queues=None if self._queues is None else tuple(sorted(self._queues)),
            workers=self._workers,
            limits=tuple(sorted((kind, limit.n) for kind, limit in self.kinds.limits().items())),
        )
        try:
            slots = worker_slots(self._kinds, self.kinds.async_names(),
                                 threads=self._workers, async_workers=self._async_workers)  # fmt: skip
            self._loops.prepare()  # schedules recorded, the watch started
            self._registration.register(info)
        except BaseException:
            self._loops.stop_watching()
            with self._lifecycle:
                self._started = False  # nothing ran: the caller may try again
            raise
        self._preemption.start()
        self._flusher.start()
        self._pool.start(slots)
        self._registration.start()
        self._loops.start(prunes=self._prunes)

    def _freeze_kinds(self) -> None:
        """No kind may be registered from now on; these are the kinds this runner claims."""
        self.kinds.freeze()
        self._kinds = frozenset(self.kinds.names())
        self._rules = self.kinds.claim_rules()
        self._exchange.serve(
            self._kinds, self._queues, self._rules, async_kinds=self.kinds.async_names()
        )

    def stop(self) -> None:
        """The first phase of stopping: take no new job; running jobs go on. Returns at once.

        ``join`` waits for them; ``stop_now`` tells their handlers to stop.
        """
        self._loops.stop_pruning()
        self._wakes.stop()
        self._scheduler_wakes.stop()
        self._pool.stop()

    def stop_now(self) -> None:
        """The second phase: also tell every handler to stop (``ctx.wait`` returns True).

        A handler that returns is recorded; one that raises because it was
        told to stop has its job queued again while its attempts last, or
        failed ``interrupted by restart``. Returns at once.
        """
        self.stop()
        self._attempts.stop_all("runner stopping")

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for every worker to exit; True if they all did.

        Once they have, the runner deletes its row and lets go of its lock,
        also bounded by ``timeout`` when the database hangs. Workers are
        daemon threads: one stuck in a handler that ignores the stop signal
        does not keep the process alive once the caller gives up.
        """
        started = self._clock.monotonic()
        finished = self._pool.join(timeout)
        if finished and self._started and self._workers:
            # Every call waits (what is left of its timeout) for the same deletion, so a
            # caller that joins in short slices does not give it up after the first.
            spent = self._clock.monotonic() - started
            left = None if timeout is None else max(0.0, timeout - spent)
            self._loops.stop_watching()
            self._flusher.finish(left)
            self._registration.finish(left)
            self._loops.finish(left)
        if finished:
            self._event_loop.close()
        return finished

    def shutdown(self, grace: float, *, then_wait: float = STOP_NOW_WAIT) -> bool:
        """Stop in two phases: let running jobs finish for ``grace`` seconds, then tell them to stop.

        Returns True when every worker exited (within ``grace + then_wait``).
        """
        self.stop()
        if self.join(timeout=grace):
            return True
        self._log.warning(
            "jobs still running after the grace period; telling their handlers to stop"
        )
        self.stop_now()
        return self.join(timeout=then_wait)

    @property
    def live_workers(self) -> int:
        """Worker threads running now: the pool size from start until stop."""
        return self._pool.live

    @property
    def observer(self) -> RunnerObserver:
        """What this runner reports its events to (a no-op unless one was given)."""
        return self._given_observer

    def notice_jobs_from_elsewhere(self) -> None:
        """Another process may have queued jobs: wake one idle worker to look.

        A worker that finds a job wakes the next idle one, so a burst is
        spread over the pool. The scheduler looks again for the earliest due
        time too, after the woken worker's claim or at the next sweep: its read
        must not delay the claim. Cheap enough to call on every change seen.
        """
        self._scheduler_wakes.noticed_elsewhere()
        self._wakes.wake_one()
