"""Kinds for the tracing test. A process that imports this module configures the
OpenTelemetry SDK as an application would, sending its spans as JSON lines to the file
``JOBTABLE_TEST_SPANS`` names (one file for every process: each line says which)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import attrs
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from jobtable.core import JobContext


class JsonLinesExporter(SpanExporter):
    """Appends each ended span to a file, one JSON object a line."""

    def __init__(self, path: str) -> None:
        self._path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self._path, "a", encoding="utf-8") as out:
            for span in spans:
                out.write(json.dumps(_line(span)) + "\n")
        return SpanExportResult.SUCCESS


def _line(span: ReadableSpan) -> dict[str, Any]:
    assert span.context is not None
    return {
        "pid": os.getpid(),
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": f"{span.context.trace_id:032x}",
        "span_id": f"{span.context.span_id:016x}",
        "parent": None if span.parent is None else f"{span.parent.span_id:016x}",
        "attributes": dict(span.attributes or {}),
        "links": [f"{link.context.span_id:016x}" for link in span.links],
    }


if "JOBTABLE_TEST_SPANS" in os.environ:
    _provider = TracerProvider()
    _provider.add_span_processor(
        SimpleSpanProcessor(JsonLinesExporter(os.environ["JOBTABLE_TEST_SPANS"]))
    )
    trace.set_tracer_provider(_provider)


@attrs.frozen
class Order:
    fail_first: bool = False


@attrs.frozen
class Shipped:
    attempt: int

    def public(self) -> dict[str, int]:
        return {"attempt": self.attempt}


def ship(ctx: JobContext, payload: Order) -> Shipped:
    with trace.get_tracer("shop").start_as_current_span("call the carrier"):
        if payload.fail_first and ctx.attempt == 1:
            raise ConnectionError("carrier down")
        return Shipped(attempt=ctx.attempt)


def register(kinds: Any) -> None:
    kinds.register("ship", ship, payload=Order, max_attempts=2, backoff=(0.05, 0.05))
