"""The event loop a runner's ``async def`` handlers run on, and the watch for one blocking it.

One thread runs the loop. Each async slot is a worker of lane 1 (core/pool.py): it hands
its handler's coroutine to the loop as a task and waits for the task to end, so every rule
a sync handler's attempt follows (timeouts, cancels, liveness, limits, being left behind)
holds for it unchanged. Telling the attempt to stop (a cancel, its timeout, the second
phase of a stop) cancels the task: its ``finally`` runs. A task that swallows the
cancel keeps its slot until it ends, as a sync handler that ignores its stop does.

While handlers run, a watchdog pings the loop; a ping unanswered for ``block_after``
seconds means a handler is blocking it (``time.sleep``, a blocking client): the watchdog
reads the loop thread's stack for the handler's kind and job, and logs them once per block.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any, TypeVar

from jobtable.core.clock import Clock

T = TypeVar("T")

BLOCK_AFTER = 1.0
"""Seconds a ping to the loop may go unanswered before the watchdog says a handler blocks it."""

PING_EVERY = 0.5
"""Seconds between the watchdog's pings while async handlers run (none while none does)."""


class _Task:
    """One handler's task as its worker sees it: started, cancelled, ended."""

    __slots__ = ("cancelled", "ended", "task")

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.cancelled = False
        self.ended = False


async def _handler_task(coroutine: Coroutine[Any, Any, Any], kind: str, job_id: str) -> Any:
    """Await one handler; its frame names the kind and job to the watchdog (``_blocking``)."""
    return await coroutine


class EventLoop:
    """The runner's event loop thread, started on the first async attempt and stopped at
    ``close``."""

    def __init__(self, clock: Clock, log: logging.Logger, *, block_after: float = BLOCK_AFTER):
        self._clock = clock
        self._log = log
        self._block_after = block_after
        self._lock = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._running = 0  # handler tasks on the loop now
        self._closing = False

    @property
    def real_time(self) -> bool:
        """Whether the runner's clock is the real one (``await_stop`` may sleep on the loop)."""
        return bool(getattr(self._clock, "real_time", False))

    def run(
        self,
        coroutine: Coroutine[Any, Any, Any],
        *,
        kind: str,
        job_id: str,
        stopping: Callable[[], bool],
        changed: threading.Condition,
    ) -> Any:
        """Run ``coroutine`` as a task on the loop and return what it returned (raise what it
        raised) once it ends. ``stopping()`` turning true, told through ``changed``,
        cancels the task; the call still waits for the task to end."""
        loop = self._started()
        state = _Task()

        def ended(task: asyncio.Task[Any]) -> None:
            with self._lock:
                self._running -= 1
            with changed:
                state.ended = True
                changed.notify_all()

        def start() -> None:
            state.task = loop.create_task(_handler_task(coroutine, kind, job_id))
            state.task.add_done_callback(ended)

        def cancel() -> None:
            if state.task is not None:
                state.task.cancel()

        with self._lock:
            self._running += 1
            self._lock.notify_all()  # the watchdog watches while handlers run
        loop.call_soon_threadsafe(start)
        while True:
            self._clock.wait_for(
                changed, lambda: state.ended or (stopping() and not state.cancelled), None
            )
            if state.ended:
                break
            state.cancelled = True
            loop.call_soon_threadsafe(cancel)
        assert state.task is not None
        return state.task.result()

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` on the running loop (an async handler's ``await_stop``)."""
        await asyncio.sleep(seconds)

    async def in_thread(self, function: Callable[[], T]) -> T:
        """Run ``function`` in a thread of the running loop's executor, awaited (a store write
        from an async handler: ``apublish``)."""
        return await asyncio.get_running_loop().run_in_executor(None, function)

    def close(self) -> None:
        """Stop the loop once no handler runs on it (one left behind keeps it, as a daemon)."""
        with self._lock:
            loop = self._loop
            if loop is None or self._running:
                return
            self._closing = True
            self._lock.notify_all()
        loop.call_soon_threadsafe(loop.stop)

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                ready = threading.Event()
                self._thread = threading.Thread(
                    target=self._serve, args=(ready,), name="jobtable-async-loop", daemon=True
                )
                self._thread.start()
                ready.wait()
                threading.Thread(
                    target=self._watch, name="jobtable-async-watchdog", daemon=True
                ).start()
            assert self._loop is not None
            return self._loop

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _watch(self) -> None:
        """Ping the loop while handlers run; log the handler that keeps it from answering."""
        loop, thread = self._loop, self._thread
        assert loop is not None
        assert thread is not None
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._running > 0 or self._closing)
                if self._closing:
                    return
            answered = threading.Event()
            sent = time.monotonic()
            try:
                loop.call_soon_threadsafe(answered.set)
            except RuntimeError:  # closed meanwhile
                return
            if not answered.wait(self._block_after):
                kind, job_id = _blocking(thread.ident)
                self._log.warning(
                    "an async handler is blocking the event loop: every async handler of "
                    "this process waits; await instead of blocking calls, or register it as "
                    "a sync handler kind=%s job_id=%s blocked_for=%.1fs",
                    kind,
                    job_id,
                    time.monotonic() - sent,
                    extra={"kind": kind, "job_id": job_id},
                )
                answered.wait()
                self._log.warning(
                    "the event loop answers again kind=%s job_id=%s blocked_for=%.1fs",
                    kind,
                    job_id,
                    time.monotonic() - sent,
                    extra={"kind": kind, "job_id": job_id},
                )
            with self._lock:
                self._lock.wait(PING_EVERY)


def _blocking(thread_id: int | None) -> tuple[str, str]:
    """The kind and job of the handler the loop thread is running now, read from its stack."""
    frame: FrameType | None = sys._current_frames().get(thread_id or 0)
    while frame is not None:
        if frame.f_code is _handler_task.__code__:
            return str(frame.f_locals.get("kind")), str(frame.f_locals.get("job_id"))
        frame = frame.f_back
    return "unknown", "unknown"
