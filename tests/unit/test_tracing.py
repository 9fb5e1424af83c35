"""OpenTelemetry: a ``send`` span per job enqueued, its W3C context stored with the job, and
a ``process`` span per attempt (the first its child, later ones linked to it).

Spans go to the SDK's in-memory exporter through a provider of the test's own. Run again
on SQLite and PostgreSQL by tests/integration/test_jobs_on_*.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from jobtable.core import Failure, JobContext, Status
from jobtable.core.otel import OpenTelemetryTracing
from jobtable.core.tracing import NO_TRACING, default_tracing
from tests.unit.kinds_for_tests import CountPayload, CountResult, count


class Spans:
    """A tracer provider of the test's own, and the spans it ended."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracing = OpenTelemetryTracing(self.provider)

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.exporter.get_finished_spans() if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        (span,) = self.named(name)
        return span


@pytest.fixture
def spans() -> Spans:
    return Spans()


def test_an_enqueue_and_its_attempt_make_one_trace(make_system, shared_store, spans):
    system = make_system(tracing=spans.tracing)
    seen: list[Any] = []

    def traced(ctx: JobContext, payload: CountPayload) -> CountResult:
        seen.append(trace.get_current_span().get_span_context())  # its own spans nest here
        return count(ctx, payload)

    kind = system.kinds.register("traced", traced, payload=CountPayload)
    system.start()
    job_id = kind.enqueue(CountPayload(steps=1), queue="default")
    assert system.wait_for(job_id).status is Status.SUCCEEDED

    sent, processed = spans.one("send traced"), spans.one("process traced")
    assert sent.kind is SpanKind.PRODUCER and processed.kind is SpanKind.CONSUMER
    assert dict(sent.attributes or {}) == {
        "messaging.system": "jobtable",
        "messaging.message.id": job_id,
        "messaging.destination.name": "default",
        "jobtable.kind": "traced",
    }
    assert dict(processed.attributes or {}) == {
        **dict(sent.attributes or {}),
        "jobtable.attempt": 1,
        "jobtable.outcome": "succeeded",
    }
    assert processed.parent is not None and processed.parent.span_id == sent.context.span_id
    assert processed.context.trace_id == sent.context.trace_id
    assert processed.status.status_code is StatusCode.UNSET
    assert seen == [processed.context]
    # The context is stored in a column of its own, never in the payload or the public view.
    row = shared_store.row(job_id)
    carrier = json.loads(row["trace_context"])
    assert carrier["traceparent"].split("-")[1] == f"{sent.context.trace_id:032x}"
    assert "traceparent" not in row["payload"]
    assert carrier["traceparent"] not in repr(
        (system.runner.get(job_id), system.runner.detail(job_id))
    )


def test_an_enqueue_under_a_span_is_its_child(make_system, spans):
    system = make_system(tracing=spans.tracing)
    kind = system.kinds.register("counted", count, payload=CountPayload)
    with spans.provider.get_tracer("web").start_as_current_span("POST /orders") as request:
        job_id = kind.enqueue(CountPayload())
    sent = spans.one("send counted")
    assert sent.parent is not None and sent.parent.span_id == request.get_span_context().span_id
    system.start()
    system.wait_for(job_id)
    assert spans.one("process counted").context.trace_id == request.get_span_context().trace_id


def test_a_batch_enqueue_makes_one_send_span_per_job(make_system, shared_store, spans):
    system = make_system(tracing=spans.tracing)
    kind = system.kinds.register("counted", count, payload=CountPayload)
    job_ids = kind.enqueue_many([CountPayload(steps=n) for n in range(3)])
    sent = spans.named("send counted")
    assert [span.attributes["messaging.message.id"] for span in sent] == list(job_ids)
    assert len({span.context.span_id for span in sent}) == 3
    stored = {
        json.loads(shared_store.row(job_id)["trace_context"])["traceparent"] for job_id in job_ids
    }
    assert len(stored) == 3  # each job its own span's context


def test_a_later_attempt_starts_a_trace_of_its_own_linked_to_the_enqueue(make_system, spans):
    system = make_system(tracing=spans.tracing)

    def flaky(ctx: JobContext, payload: CountPayload) -> CountResult:
        if ctx.attempt == 1:
            raise ConnectionError("partner down")
        if ctx.attempt == 2:
            raise Failure("declined")
        return CountResult(done=ctx.attempt)

    kind = system.kinds.register(
        "flaky", flaky, payload=CountPayload, failure_codes=["declined"],
        retry_on=["declined"], max_attempts=3, backoff=(1.0, 1.0),
    )  # fmt: skip
    system.start()
    job_id = kind.enqueue(CountPayload())
    for attempt in (1, 2):
        system.wait_for(job_id, lambda job, n=attempt: len(spans.named("process flaky")) == n)
        system.clock.wait_for_sleepers(1)
        system.clock.advance(1.0)
    assert system.wait_for(job_id).status is Status.SUCCEEDED

    sent = spans.one("send flaky")
    first, second, third = sorted(
        spans.named("process flaky"), key=lambda span: span.attributes["jobtable.attempt"]
    )
    assert first.parent is not None and first.parent.span_id == sent.context.span_id
    assert (first.attributes["jobtable.outcome"], first.status.status_code) == (
        "internal_error",
        StatusCode.ERROR,
    )
    assert first.status.description is None  # never the exception's text
    assert second.attributes["jobtable.outcome"] == "declined"
    assert third.attributes["jobtable.outcome"] == "succeeded"
    for later in (second, third):
        assert later.parent is None and later.context.trace_id != sent.context.trace_id
        assert [link.context.span_id for link in later.links] == [sent.context.span_id]
    assert "partner down" not in repr(
        [span.to_json() for span in spans.exporter.get_finished_spans()]
    )


def test_an_async_handler_runs_inside_its_process_span(make_system, spans):
    system = make_system(tracing=spans.tracing)
    seen: list[Any] = []

    async def traced(ctx: JobContext, payload: CountPayload) -> CountResult:
        seen.append(trace.get_current_span().get_span_context())
        return CountResult(done=1)

    kind = system.kinds.register("traced", traced, payload=CountPayload)
    system.start()
    system.wait_for(kind.enqueue(CountPayload()))
    assert seen == [spans.one("process traced").context]


def test_a_timed_out_attempt_is_an_error_span_with_its_code(make_system, spans):
    system = make_system(tracing=spans.tracing)

    def slow(ctx: JobContext, payload: CountPayload) -> CountResult:
        if ctx.wait(3600):
            raise RuntimeError("told to stop")
        return CountResult(done=0)

    kind = system.kinds.register("slow", slow, payload=CountPayload, timeout=5)
    system.start()
    job_id = kind.enqueue(CountPayload())
    system.clock.wait_for_sleepers(2)
    system.clock.advance(5)
    assert system.wait_for(job_id).error == "timed_out"
    processed = spans.one("process slow")
    assert processed.attributes["jobtable.outcome"] == "timed_out"
    assert processed.status.status_code is StatusCode.ERROR


def test_without_tracing_nothing_is_stored(make_system, shared_store):
    system = make_system(tracing=NO_TRACING)
    kind = system.kinds.register("counted", count, payload=CountPayload)
    job_id = kind.enqueue(CountPayload())
    assert shared_store.row(job_id)["trace_context"] is None


def test_the_default_is_opentelemetry_when_it_is_installed():
    assert isinstance(default_tracing(), OpenTelemetryTracing)


class Raising(SpanProcessor):
    """A span processor that raises where ``where`` says: the SDK does not guard them."""

    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.where == "start":
            raise RuntimeError("processor failed")

    def on_end(self, span: ReadableSpan) -> None:
        if self.where == "end":
            raise RuntimeError("processor failed")


@pytest.mark.parametrize("where", ["start", "end"])
def test_a_tracer_that_raises_never_fails_or_holds_up_a_job(make_system, where, caplog):
    provider = TracerProvider()
    provider.add_span_processor(Raising(where))
    system = make_system(tracing=OpenTelemetryTracing(provider))
    kind = system.kinds.register("counted", count, payload=CountPayload)
    system.start()
    job_ids = [kind.enqueue(CountPayload(steps=n)) for n in (1, 2)]
    for job_id in job_ids:
        assert system.wait_for(job_id).status is Status.SUCCEEDED
    assert "tracing failed" in caplog.text and "error_type=RuntimeError" in caplog.text
    assert "processor failed" not in caplog.text + system.logs.text
    assert trace.get_current_span().get_span_context().is_valid is False  # nothing left attached
