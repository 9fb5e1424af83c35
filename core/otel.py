"""OpenTelemetry tracing (``pip install jobtable[otel]``), per the messaging conventions.

Each job enqueued gets a ``send {kind}`` span (PRODUCER), child of whatever span is
current (a web request's); its W3C ``traceparent`` and ``tracestate`` are stored
with the job as JSON. Each attempt gets a ``process {kind}`` span (CONSUMER): the
first attempt's is the ``send`` span's child, so one trace runs from the request
to the job's end; a later attempt starts a trace of its own with a link to it.
Only the OpenTelemetry API is used: an application configures the SDK and its
exporters (nothing is recorded until it does).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from jobtable.core.jobs import ClaimedJob, Enqueued, NewJob
from jobtable.core.outcome import SNOOZED
from jobtable.core.tracing import Processing, Sending

_log = logging.getLogger("jobtable.tracing")
SYSTEM = "jobtable"
SUCCEEDED = "succeeded"
_W3C = TraceContextTextMapPropagator()
_ERROR = trace.Status(trace.StatusCode.ERROR)


def _attributes(kind: str, job_id: str, queue: str) -> dict[str, Any]:
    return {
        "messaging.system": SYSTEM,
        "messaging.message.id": job_id,
        "messaging.destination.name": queue,
        "jobtable.kind": kind,
    }


def stored_context(trace_context: str | None) -> trace.SpanContext | None:
    """The span context a job's stored ``trace_context`` names; None for none or a malformed one."""
    if not trace_context:
        return None
    try:
        carrier = json.loads(trace_context)
    except ValueError:
        return None
    if not isinstance(carrier, dict):
        return None
    extracted = _W3C.extract({str(k): str(v) for k, v in carrier.items()})
    span_context = trace.get_current_span(extracted).get_span_context()
    return span_context if span_context.is_valid else None


class _Sending:
    def __init__(self, spans: list[trace.Span]) -> None:
        self._spans = spans

    def end(self, stored: Sequence[Enqueued] | None) -> None:
        with _never_raising("end the send spans"):
            for n, span in enumerate(self._spans):
                if stored is None:
                    span.set_status(_ERROR)
                elif stored[n].duplicate:
                    span.set_attribute("jobtable.duplicate", True)
                    span.set_attribute("messaging.message.id", str(stored[n]))
                span.end()


class _Processing:
    def __init__(self, span: trace.Span, token: object) -> None:
        self._span = span
        self._token = token

    def end(self, outcome: str) -> None:
        try:
            with _never_raising("end a process span"):
                span = self._span
                span.set_attribute("jobtable.outcome", outcome)
                if outcome not in (SUCCEEDED, SNOOZED):
                    span.set_status(_ERROR)  # a code, never an exception's text
                span.end()
        finally:
            with _never_raising("detach a process span's context"):
                otel_context.detach(self._token)  # type: ignore[arg-type]


class _NoSpan:
    def end(self, _: object) -> None:
        return None


_NO_SPAN = _NoSpan()


@contextlib.contextmanager
def _never_raising(what: str) -> Iterator[None]:
    """A tracer or span processor that raises (the SDK does not guard them) must not fail
    or hold up a job: it is logged, by its type only, and the job goes on untraced."""
    try:
        yield
    except Exception as error:
        _log.warning("tracing failed: could not %s; error_type=%s", what, type(error).__name__)


class OpenTelemetryTracing:
    """Spans through ``tracer_provider`` (default: the OpenTelemetry API's global one)."""

    enabled = True

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        # Before an application sets the global provider this is a proxy, which turns
        # into the provider's tracer once it is set.
        self._tracer = trace.get_tracer("jobtable", tracer_provider=tracer_provider)

    def sending(self, jobs: list[NewJob]) -> tuple[list[NewJob], Sending]:
        with _never_raising("start the send spans"):
            return self._sending(jobs)
        return jobs, _NO_SPAN

    def _sending(self, jobs: list[NewJob]) -> tuple[list[NewJob], _Sending]:
        tracer = self._tracer
        spans: list[trace.Span] = []
        traced: list[NewJob] = []
        for job in jobs:
            span = tracer.start_span(
                f"send {job.kind}",
                kind=trace.SpanKind.PRODUCER,
                attributes=_attributes(job.kind, job.id, job.queue),
            )
            spans.append(span)
            carrier: dict[str, str] = {}
            _W3C.inject(carrier, context=trace.set_span_in_context(span))
            traced.append(attrs.evolve(job, trace_context=json.dumps(carrier)) if carrier else job)
        return traced, _Sending(spans)

    def processing(self, job: ClaimedJob) -> Processing:
        with _never_raising("start a process span"):
            return self._processing(job)
        return _NO_SPAN

    def _processing(self, job: ClaimedJob) -> _Processing:
        attempt = job.claim.attempt
        sent = stored_context(job.trace_context)
        attributes = {**_attributes(job.kind, job.id, job.queue), "jobtable.attempt": attempt}
        if sent is not None and attempt <= 1:
            parent = trace.set_span_in_context(trace.NonRecordingSpan(sent), otel_context.Context())
            links: list[trace.Link] = []
        else:  # a later attempt: a trace of its own, linked to its enqueue
            parent = otel_context.Context()
            links = [] if sent is None else [trace.Link(sent)]
        span = self._tracer.start_span(
            f"process {job.kind}",
            context=parent,
            kind=trace.SpanKind.CONSUMER,
            attributes=attributes,
            links=links,
        )
        try:
            token = otel_context.attach(trace.set_span_in_context(span))
        except BaseException:
            span.end()
            raise
        return _Processing(span, token)

    def incoming(self, headers: Mapping[str, str]) -> Callable[[], None]:
        if trace.get_current_span().get_span_context().is_valid:
            return _stay  # a server span of the application's own is current: the parent
        parent = _W3C.extract({name.lower(): value for name, value in headers.items()})
        if not trace.get_current_span(parent).get_span_context().is_valid:
            return _stay  # none, or malformed: the enqueue starts a trace of its own
        token = otel_context.attach(parent)
        return lambda: otel_context.detach(token)


def _stay() -> None:
    return None
