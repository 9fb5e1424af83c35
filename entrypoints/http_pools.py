"""waitress's threads in two pools: ordinary requests, and requests that may wait.

waitress hands every request to any idle thread of one pool. A stream or a
long-poll keeps its thread while it waits, so in one pool a hundred of them
would leave ordinary requests none; and a pool grown by a hundred threads
for them lets a burst of ordinary requests run a hundred at once, contending
for the GIL and the database (measured: a third fewer answers a second
than with the pool's four). So each request is sorted as it is dispatched,
from its method, path and headers, before any thread takes it: ordinary
requests run on ``--http-threads`` threads as before, and requests that may
wait on threads of their own, one per stream slot and a few spare (they
answer the 503 of a stream that finds every slot taken, and a long-poll that
needs no wait). The waiting pool starts with the spare threads only and adds
one when a request finds none idle, up to its limit: an idle server holds no
thread for a stream it may someday serve.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from waitress.task import ThreadedTaskDispatcher

SPARE_WAITING_THREADS = 2
"""Threads of the waiting pool beyond the stream slots: a request refused for want of a
slot, or one that needs no wait, is answered even while every slot holds a thread."""

MayWait = Callable[[str, str, Mapping[str, str]], bool]
"""Whether a request (its method, its path, its headers by waitress's names, such as
``IF_NONE_MATCH``) may wait: it then runs in the waiting pool."""


class _Pool(ThreadedTaskDispatcher):  # type: ignore[misc]
    """waitress's pool, its threads named for what they serve."""

    def __init__(self, name: str, threads: int) -> None:
        super().__init__()
        self.name = name
        self.set_thread_count(threads)

    def start_new_thread(self, target: Callable[[int], None], thread_no: int) -> None:
        thread = threading.Thread(target=target, name=f"{self.name}-{thread_no}", args=(thread_no,))
        thread.daemon = True
        thread.start()


class _OnDemandPool(_Pool):
    """A pool that starts with ``threads`` and adds one whenever a request would wait for a
    thread, up to ``limit``; a thread it started stays (a stream's peak is likely to return)."""

    def __init__(self, name: str, threads: int, *, limit: int) -> None:
        super().__init__(name, threads)
        self.limit = limit

    def add_task(self, task: Any) -> None:
        with self.lock:
            running = len(self.threads) - self.stop_count
            idle = running - self.active_count
            if len(self.queue) >= idle and running < self.limit and self.stop_count == 0:
                number = 0
                while number in self.threads:
                    number += 1
                self.threads.add(number)
                self.active_count += 1  # as waitress counts a thread it starts, until it waits
                self.start_new_thread(self.handler_thread, number)
        super().add_task(task)


class TwoPools:
    """A waitress task dispatcher made of two ``ThreadedTaskDispatcher``s."""

    def __init__(self, *, ordinary: int, waiting: int, may_wait: MayWait) -> None:
        self.ordinary = _Pool("jobtable-request", ordinary)
        self.waiting = (
            _OnDemandPool(
                "jobtable-stream", SPARE_WAITING_THREADS, limit=waiting + SPARE_WAITING_THREADS
            )
            if waiting
            else None
        )
        self._may_wait = may_wait

    @property
    def pools(self) -> list[_Pool]:
        return [pool for pool in (self.ordinary, self.waiting) if pool is not None]

    def add_task(self, channel: Any) -> None:
        """``channel`` is ready to run its first request: sort it by that request."""
        pool = self.waiting if self.waiting is not None and self._waits(channel) else None
        (pool or self.ordinary).add_task(channel)

    def _waits(self, channel: Any) -> bool:
        requests = getattr(channel, "requests", None)
        if not requests or getattr(requests[0], "error", None) is not None:
            return False
        request = requests[0]
        return self._may_wait(request.command, request.path, request.headers)

    def queued(self) -> bool:
        """Whether any request waits for a thread."""
        for pool in self.pools:
            with pool.lock:
                if pool.queue:
                    return True
        return False

    def shutdown(self, cancel_pending: bool = True, timeout: float = 5) -> bool:
        deadline = time.monotonic() + timeout
        done = True
        for pool in self.pools:
            left = max(0.0, deadline - time.monotonic())
            done = pool.shutdown(cancel_pending=cancel_pending, timeout=left) and done
        return done
