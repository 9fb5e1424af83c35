"""What a handler gets besides its payload: its job id, publish, and the stop signal."""

from __future__ import annotations

from collections.abc import Callable
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
    ) -> None:
        self.job_id = job_id
        self.attempt = attempt
        self.checkpoint = checkpoint
        self._publish = publish
        self._wait = wait
        self._is_stopping = is_stopping

    def publish(self, partial: Any) -> None:
        """Store ``partial.public()`` as the job's latest result.

        Raises ResultEncodeError when it has no public JSON and
        JobNotHeldError when the job is no longer this runner's.
        """
        self._publish(partial)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` on the runner's clock; True once the handler is told to stop."""
        return self._wait(seconds)

    @property
    def stopping(self) -> bool:
        return self._is_stopping()
