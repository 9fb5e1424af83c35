"""What a handler gets besides its payload: its job id, publish, and the stop signal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


class JobNotHeldError(RuntimeError):
    """A publish for a job this runner no longer holds (another outcome was recorded)."""


class JobContext:
    """The running job's side of the runner.

    ``publish(partial)`` stores a partial result that GET shows while the
    job runs; ``wait(seconds)`` sleeps on the runner's clock and returns True
    at once when the handler is told to stop; ``stopping`` can be polled.
    A handler is told to stop in the second phase of a shutdown, when its
    runner's liveness could not be confirmed in time, when its job was
    settled elsewhere, cancelled, or ran past its timeout. ``attempt``
    counts from 1. ``checkpoint`` is the last partial result an earlier
    attempt published (its public JSON), or None: a retried job resumes
    from it instead of starting over.
    """

    def __init__(
        self,
        *,
        job_id: str,
        attempt: int,
        checkpoint: Any = None,
        publish: Callable[[Any], None],
        wait: Callable[[float], bool],
        is_stopping: Callable[[], bool],
        await_stop: Callable[[float], Awaitable[bool]] | None = None,
        in_thread: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
        runner_id: str = "",
    ) -> None:
        """``await_stop`` and ``in_thread`` (runs a call in a thread, awaited) serve an async
        handler's ``await_stop`` and ``apublish``; the runner gives them (core/async_loop.py).
        ``runner_id``: the runner running the attempt (its detail's ``runner``)."""
        self.job_id = job_id
        self.runner_id = runner_id
        self.attempt = attempt
        self.checkpoint = checkpoint
        self._publish = publish
        self._wait = wait
        self._is_stopping = is_stopping
        self._await_stop = await_stop
        self._in_thread = in_thread

    def publish(self, partial: Any) -> None:
        """Store ``partial.public()`` as the job's latest result.

        Raises ResultEncodeError when it has no public JSON and
        JobNotHeldError when the job is no longer this runner's.
        """
        self._publish(partial)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` on the runner's clock; True once the handler is told to stop."""
        return self._wait(seconds)

    async def apublish(self, partial: Any) -> None:
        """``publish`` for an ``async def`` handler: the store's write runs in a thread, the
        event loop goes on meanwhile."""
        if self._in_thread is None:
            raise RuntimeError("apublish is for an async def handler the runner runs")
        await self._in_thread(lambda: self._publish(partial))

    async def await_stop(self, seconds: float) -> bool:
        """``wait`` for an ``async def`` handler: sleep up to ``seconds`` without blocking the
        event loop; True once the handler is told to stop. A stop also cancels the
        handler's task, so the sleep usually ends with ``asyncio.CancelledError``."""
        if self._is_stopping():
            return True
        if self._await_stop is None:
            raise RuntimeError("await_stop is for an async def handler the runner runs")
        return bool(await self._await_stop(seconds))

    @property
    def stopping(self) -> bool:
        return self._is_stopping()
