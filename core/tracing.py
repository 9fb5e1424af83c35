"""Tracing: the port the client reports each enqueue to and the executor each attempt.

With OpenTelemetry installed (``pip install jobtable[otel]``) the default is
``core/otel.py``'s: a ``send {kind}`` span per job enqueued, whose W3C context is
stored with the job, and a ``process {kind}`` span per attempt. Without it the
default is NO_TRACING, which imports nothing and does nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from jobtable.core.jobs import ClaimedJob, Enqueued, NewJob


class Sending(Protocol):
    """The ``send`` spans of one enqueue, open while the store writes."""

    def end(self, stored: Sequence[Enqueued] | None) -> None:
        """End them: the ids as stored (one per job, in order), or None when the store raised."""


class Processing(Protocol):
    """The ``process`` span of one attempt, current in its worker's thread while it runs."""

    def end(self, outcome: str) -> None:
        """End it with ``outcome``: ``succeeded``, ``snoozed`` or the failure code.
        Called once, in the thread that began it."""


class Tracing(Protocol):
    """Where enqueues and attempts are traced."""

    enabled: bool

    def sending(self, jobs: list[NewJob]) -> tuple[list[NewJob], Sending]:
        """Begin a ``send`` span per job; the jobs with the spans' context to store."""

    def processing(self, job: ClaimedJob) -> Processing:
        """Begin the ``process`` span of the attempt ``job`` was claimed for, current in the
        calling thread until it ends."""

    def incoming(self, headers: Mapping[str, str]) -> Callable[[], None]:
        """Make a request's W3C ``traceparent`` (and ``tracestate``) current in the calling
        thread, so its enqueues' spans are its children (a malformed one is ignored); the
        function that makes it current no longer."""


class _Nothing:
    def end(self, _: object) -> None:
        return None


_NOTHING = _Nothing()


class NoTracing:
    """No tracing: every call returns at once and nothing is stored."""

    enabled = False

    def sending(self, jobs: list[NewJob]) -> tuple[list[NewJob], Sending]:
        return jobs, _NOTHING

    def processing(self, job: ClaimedJob) -> Processing:
        return _NOTHING

    def incoming(self, headers: Mapping[str, str]) -> Callable[[], None]:
        return _leave_nothing


def _leave_nothing() -> None:
    return None


NO_TRACING = NoTracing()


def default_tracing() -> Tracing:
    """OpenTelemetry's tracing when its API is installed, else NO_TRACING (importing nothing)."""
    try:
        installed = importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):  # a parent missing, or a module stubbed out as None
        installed = False
    if not installed:
        return NO_TRACING
    from jobtable.core.otel import OpenTelemetryTracing

    return OpenTelemetryTracing()
