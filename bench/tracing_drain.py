"""What tracing costs: enqueue and drain with tracing off, with the OpenTelemetry API but no
SDK (what an application that installed the extra and configured nothing pays), and with
the SDK recording every span (a batch span processor and an exporter that drops them).

Enqueue: N jobs, one commit each. Drain: N jobs enqueued in batches, then a runner in
this process (SystemClock, SQLite at synchronous FULL, 2 workers) drains them; the rate
is jobs over the time from start to the last one finished. Rounds alternate the modes,
so each figure sees the same machine.

    .venv/bin/python bench/tracing_drain.py                  # 3,000 jobs, 2 rounds
    .venv/bin/python bench/tracing_drain.py --jobs 500 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import attrs
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from jobtable import JobContext, Runner, SystemClock
from jobtable.core.otel import OpenTelemetryTracing
from jobtable.core.tracing import NO_TRACING, Tracing
from jobtable.entrypoints.wiring import open_store


@attrs.frozen
class Nothing:
    pass


@attrs.frozen
class Done:
    def public(self) -> dict[str, Any]:
        return {}


def noop(ctx: JobContext, payload: Nothing) -> Done:
    return Done()


class Dropped(SpanExporter):
    """Takes every span and sends it nowhere: the SDK's own cost, without a collector's."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS


def one_round(database: str, jobs: int, workers: int, tracing: Tracing) -> tuple[float, float]:
    clock = SystemClock()
    store = open_store(database, synchronous="full", now=clock.now())
    runner = Runner(store, clock, workers=workers, tracing=tracing)
    kind = runner.kinds.register("bench_noop", noop, payload=Nothing)
    began = time.perf_counter()
    for _ in range(jobs):
        kind.enqueue(Nothing())
    enqueue_rate = jobs / (time.perf_counter() - began)
    began = time.perf_counter()
    runner.start()
    while sum(count.count for count in runner.job_counts()):  # unfinished jobs left
        time.sleep(0.005)
    drain_rate = jobs / (time.perf_counter() - began)
    runner.stop()
    runner.join(30)
    store.close()
    return enqueue_rate, drain_rate


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    exporter = Dropped()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    modes: list[tuple[str, Tracing]] = [
        ("tracing off", NO_TRACING),
        ("API only, no SDK", OpenTelemetryTracing()),
        ("SDK, every span recorded", OpenTelemetryTracing(provider)),
    ]
    rates: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in modes}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for n, (label, tracing) in enumerate(modes):
                database = os.path.join(folder, f"{round_}-{n}.db")
                rates[label].append(one_round(database, args.jobs, args.workers, tracing))
    provider.force_flush()
    base_enqueue = statistics.median(rate[0] for rate in rates[modes[0][0]])
    base_drain = statistics.median(rate[1] for rate in rates[modes[0][0]])
    for label, measured in rates.items():
        enqueue = statistics.median(rate[0] for rate in measured)
        drained = statistics.median(rate[1] for rate in measured)
        print(
            f"{label:>26}: enqueue {enqueue:6.0f}/s ({enqueue / base_enqueue:.2f}x off), "
            f"drain {drained:6.0f}/s ({drained / base_drain:.2f}x off)"
        )
    print(f"spans exported: {exporter.count} (2 a job in the SDK rounds)")


if __name__ == "__main__":
    run()
