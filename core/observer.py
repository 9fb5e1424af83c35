"""What a runner tells an observer as it works: the hook metrics hang on.

The runner calls one method per event, on the thread the event happens in,
and goes on: an observer must be quick, must not block and must not raise
(a metrics library's counter increment is the model). Nothing here does
I/O; ``jobtable.entrypoints.metrics`` turns the events into Prometheus
series.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Protocol

from jobtable.core.jobs import Recovered

SUCCEEDED = "succeeded"
"""The code an attempt that returned a result is reported with."""


class RunnerObserver(Protocol):
    def job_started(self, kind: str, *, waited: float | None) -> None:
        """A worker began running a job of ``kind``.

        ``waited``: seconds from when the job was due to when it was claimed
        (None when the store did not say when it was due).
        """
        ...

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        """An attempt that ``job_started`` reported ended, after ``seconds`` of running.

        ``code`` is ``succeeded``, the failure code the attempt ended with
        (``internal_error``, a declared code, ``cancelled``...), or
        ``snoozed``; ``final`` is False when the job was queued again (a
        retry or a snooze). Reported once per ``job_started``, before the
        outcome is written, by whichever party settles the attempt.
        """
        ...

    def claim_failed(self) -> None:
        """A claim failed with a database error (it is retried after the backoff)."""
        ...

    def jobs_recovered(self, recovered: Recovered) -> None:
        """A sweep settled the running jobs of runners found dead: failed or queued again."""
        ...


class NoObserver:
    """The default observer: every event is dropped."""

    def job_started(self, kind: str, *, waited: float | None) -> None:
        pass

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        pass

    def claim_failed(self) -> None:
        pass

    def jobs_recovered(self, recovered: Recovered) -> None:
        pass


class GuardedObserver:
    """An observer whose every error is logged and swallowed: a failing metrics write never
    changes a job's outcome. (What raises past ``Exception`` still ends the attempt as the
    runner's own error, its attempt spent.)"""

    def __init__(self, inner: RunnerObserver, log: logging.Logger) -> None:
        self.inner = inner
        self._log = log

    def job_started(self, kind: str, *, waited: float | None) -> None:
        with self._guarded("job_started"):
            self.inner.job_started(kind, waited=waited)

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        with self._guarded("job_ended"):
            self.inner.job_ended(kind, code=code, final=final, seconds=seconds)

    def claim_failed(self) -> None:
        with self._guarded("claim_failed"):
            self.inner.claim_failed()

    def jobs_recovered(self, recovered: Recovered) -> None:
        with self._guarded("jobs_recovered"):
            self.inner.jobs_recovered(recovered)

    @contextlib.contextmanager
    def _guarded(self, event: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            self._log.warning(
                "observer failed; the job goes on event=%s category=unexpected %s",
                event,
                type(error).__name__,
            )
