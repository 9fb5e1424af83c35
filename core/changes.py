"""Who waits for a change in this process: readers of a job, and runners for work to claim.

Every write this process makes, and every notice that another process changed a job, pokes
those waiting for it, who then read again: a lost or extra poke costs a read, never a wrong
answer. Runners of one process share one hub, so a write by one wakes the others.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from types import TracebackType

from jobtable.core.clock import Clock


class Subscription:
    """One reader's interest in one job; a context manager that unsubscribes on exit."""

    def __init__(
        self, hub: JobChanges, job_id: str, on_poke: Callable[[], None] | None = None
    ) -> None:
        self._hub = hub
        self.job_id = job_id
        self._changed = threading.Condition()
        self._poked = False
        self._on_poke = on_poke

    def poke(self) -> None:
        with self._changed:
            self._poked = True
            self._changed.notify_all()
        if self._on_poke is not None:
            self._on_poke()

    def wait(self, timeout: float | None, *, clock: Clock | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: for good) for a poke; True when poked (read
        again), False when the time ran out.

        A poke that came since the last wait counts: read, then wait, and no
        change between the two is missed. True too once the hub is closed.
        The wait is timed on ``clock`` when given (a fake clock's tests), else
        in real time.
        """
        if clock is None:
            with self._changed:
                self._changed.wait_for(lambda: self._poked, timeout)
        else:
            clock.wait_for(self._changed, lambda: self._poked, timeout)
        with self._changed:
            poked, self._poked = self._poked, False
        return poked or self._hub.closed

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._hub.unsubscribe(self)


class JobChanges:
    """The subscriptions of one process, by job id, and the runners that claim in it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_job: dict[str, set[Subscription]] = {}
        self._closed = False
        self._claimers: tuple[tuple[object, Collection[str] | None, Callable[[], None]], ...] = ()

    def listen_for_work(
        self, claimer: object, queues: Collection[str] | None, notice: Callable[[], None]
    ) -> None:
        """``claimer`` claims from ``queues`` (None: all): ``notice`` when one may have work."""
        with self._lock:  # replaced, never changed: read without the lock
            self._claimers = (*self._claimers, (claimer, queues, notice))

    def work_for(self, queue: str | None, *, besides: object) -> None:
        """Jobs of ``queue`` (None: any) may be claimable now: every claimer serving it but
        ``besides`` (the one whose write it was, which knows) looks."""
        for claimer, queues, notice in self._claimers:
            if claimer is not besides and (queue is None or queues is None or queue in queues):
                notice()

    @property
    def closed(self) -> bool:
        """True once ``close`` was called: waits end, streams finish."""
        return self._closed

    def subscribe(self, job_id: str, on_poke: Callable[[], None] | None = None) -> Subscription:
        """A reader's interest in ``job_id``; ``on_poke`` (cheap, any thread) is told of each
        poke besides ``wait`` (an asyncio reader wakes its event through it)."""
        subscription = Subscription(self, job_id, on_poke)
        with self._lock:
            self._by_job.setdefault(job_id, set()).add(subscription)
            if self._closed:
                subscription.poke()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            subscribers = self._by_job.get(subscription.job_id)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._by_job[subscription.job_id]

    def watched(self) -> int:
        """How many subscriptions are open now."""
        with self._lock:
            return sum(len(subscribers) for subscribers in self._by_job.values())

    def changed(self, job_id: str) -> None:
        """The job may have changed: its subscribers read it again."""
        with self._lock:
            subscribers = self._by_job.get(job_id)
            if subscribers:
                for subscription in subscribers:
                    subscription.poke()

    def changed_somewhere(self) -> None:
        """Some job may have changed (a notice that names none): every subscriber reads again."""
        with self._lock:
            for subscribers in self._by_job.values():
                for subscription in subscribers:
                    subscription.poke()

    def close(self) -> None:
        """End every wait, now and later: the server is stopping."""
        with self._lock:
            self._closed = True
        self.changed_somewhere()
