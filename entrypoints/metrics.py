"""Prometheus metrics: the runner's events as counters and histograms, the store read at scrape.

Two kinds of series, from two places:

- *events* (``JobMetrics``, the runner's observer): completions by kind and
  code, run time and queue wait by kind, claim errors, recoveries of dead
  runners' jobs, busy workers. They count what this process did.
- *state* (``StoreCollector``, read at each scrape): jobs queued, scheduled
  and running by queue and kind, live runners. They describe the whole
  database, so every process scraped reports the same values: aggregate them
  with ``max``, not ``sum``.

Each app exposes its own ``CollectorRegistry`` (never the global default),
so two apps in one process, or two tests, never share a series.

Several processes (a supervisor's workers) add up through prometheus-client's
multiprocess mode: start every process with ``PROMETHEUS_MULTIPROC_DIR`` set
to one empty directory. Each then writes its event series to files there, and
any of them serves the sum over all of them. The directory must be emptied
before the processes start, and the supervisor calls
``prometheus_client.multiprocess.mark_process_dead(pid)`` when a child exits,
so its busy workers stop counting (its counters are kept).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from jobtable.core import Runner, StoreError
from jobtable.core.held_back import HeldBack
from jobtable.core.jobs import JobCount, Recovered
from jobtable.core.liveness import RunnerRecord
from jobtable.core.metric_labels import LABEL_VALUES, OTHER, Labels, choose_labels
from jobtable.entrypoints.metrics_counts import CountsReader

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"

SCRAPED_STATUSES = ("queued", "scheduled", "running")
"""The statuses counted at each scrape (from partial indexes); finished jobs are counted
by the completions counter instead, so a scrape never reads the finished rows."""

SCRAPED_STATES = ("scheduled", "available", "retrying", "running")
"""The operator's states of the same jobs (core/states.py), in ``jobtable_jobs_by_state``."""

RUN_TIME_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600)
"""Seconds a handler ran: from a noop's milliseconds to an hour's report."""

QUEUE_WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600)
"""Seconds from a job's due time to its claim: a wake is milliseconds, a backlog minutes."""


class JobMetrics:
    """A runner observer (core/observer.py) that counts into Prometheus metrics.

    Give the same one to every runner of a process, and the runner to
    ``create_app`` (it finds its observer there). Its metrics are registered
    in no registry of their own: ``metrics_registry`` adds them to each
    app's. Every method is one metric update: cheap enough for the hot path.
    """

    def __init__(self) -> None:
        self.multiprocess_dir = os.environ.get(MULTIPROCESS_ENV) or None
        self.completions = Counter(
            "jobtable_job_completions",
            "Attempts that ended, by kind and code: succeeded, a failure code, or snoozed; "
            "final is false when the job was queued again (a retry or a snooze).",
            ["kind", "code", "final"],
            registry=None,
        )
        self.run_time = Histogram(
            "jobtable_job_run_seconds",
            "Seconds an attempt's handler ran, by kind.",
            ["kind"],
            buckets=RUN_TIME_BUCKETS,
            registry=None,
        )
        self.queue_wait = Histogram(
            "jobtable_job_queue_wait_seconds",
            "Seconds from when a job was due to when a worker claimed it, by kind.",
            ["kind"],
            buckets=QUEUE_WAIT_BUCKETS,
            registry=None,
        )
        self.claim_errors = Counter(
            "jobtable_claim_errors",
            "Claims that failed with a database error (each retried after a backoff).",
            registry=None,
        )
        self.recovered = Counter(
            "jobtable_recovered_jobs",
            "Running jobs of dead runners settled by this process's sweeps: "
            "requeued, or failed 'interrupted by restart'.",
            ["outcome"],
            registry=None,
        )
        self.busy_workers = Gauge(
            "jobtable_busy_workers",
            "Workers running a job now.",
            registry=None,
            multiprocess_mode="livesum",
        )
        # Each labelled child looked up once: ``labels()`` takes a lock and builds a key.
        self._waits: dict[str, Any] = {}
        self._runs: dict[str, Any] = {}
        self._ends: dict[tuple[str, str, bool], Any] = {}

    # -- the observer ---------------------------------------------------------

    def job_started(self, kind: str, *, waited: float | None) -> None:
        self.busy_workers.inc()
        if waited is not None:
            wait = self._waits.get(kind)
            if wait is None:
                wait = self._waits[kind] = self.queue_wait.labels(kind)
            wait.observe(waited)

    def job_ended(self, kind: str, *, code: str, final: bool, seconds: float) -> None:
        self.busy_workers.dec()
        run = self._runs.get(kind)
        if run is None:
            run = self._runs[kind] = self.run_time.labels(kind)
        run.observe(seconds)
        end = self._ends.get((kind, code, final))
        if end is None:
            end = self._ends[(kind, code, final)] = self.completions.labels(
                kind, code, "true" if final else "false"
            )
        end.inc()

    def claim_failed(self) -> None:
        self.claim_errors.inc()

    def jobs_recovered(self, recovered: Recovered) -> None:
        if recovered.requeued:
            self.recovered.labels("requeued").inc(recovered.requeued)
        if recovered.failed:
            self.recovered.labels("failed").inc(recovered.failed)

    def collectors(self) -> list[Collector]:
        return [
            self.completions,
            self.run_time,
            self.queue_wait,
            self.claim_errors,
            self.recovered,
            self.busy_workers,
        ]


class StoreCollector(Collector):
    """The database's state at each scrape: jobs by queue, kind and status; live runners.

    Two reads: the counts come from the partial indexes on unfinished jobs
    (served from the latest background read while counting is slow, with
    their age: metrics_counts.py), the runners from their small table. When
    the database cannot be read, ``jobtable_store_up`` is 0 and the other
    state series are left out (the event series still answer).
    """

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._counts = CountsReader(lambda: runner.job_counts())
        self._held_back = CountsReader(lambda: runner.held_back())

    def describe(self) -> Iterable[Metric]:
        return ()  # read at scrape; nothing to check for duplicates at registration

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "jobtable_store_up", "1 when this scrape read the database, 0 when it could not."
        )
        try:
            counts, age = self._counts.counts()
            held_back, _ = self._held_back.counts()
            runners = self._runner.runners()
        except StoreError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        labels = self._labels(counts, runners)
        yield self._jobs(counts, labels)
        yield self._jobs(counts, labels, by_state=True)
        yield _held_back(held_back, labels)
        yield GaugeMetricFamily(
            "jobtable_jobs_age_seconds",
            "Seconds since jobtable_jobs was counted: 0 when this scrape counted it; more while "
            "counting is slow (a deep backlog) and is done in the background.",
            age,
        )
        yield GaugeMetricFamily(
            "jobtable_runners", "Runners registered and alive on the database.", len(runners)
        )

    def _labels(self, counts: list[JobCount], runners: Iterable[RunnerRecord]) -> Labels:
        # Queue names are the clients': a bounded few of them (and of kinds) label a series,
        # the rest are summed under "other" (core/metric_labels.py).
        queues = {queue for queue, _ in self._registered()}
        kinds = {kind for _, kind in self._registered()}
        for record in runners:  # what the operators run: kept before any client's name
            queues.update(record.info.queues or ())
            kinds.update(record.info.kinds)
        return choose_labels(counts, queues=queues, kinds=kinds)

    def _jobs(
        self, counts: list[JobCount], labels: Labels, *, by_state: bool = False
    ) -> GaugeMetricFamily:
        # Every status (or state) of every queue and kind seen (and every kind registered
        # here, in its queue) is written, zeros too: a drained queue reads 0, not a gap.
        registered = self._registered()
        found = labels.counts(counts, by_state=by_state)
        pairs = {(queue, kind) for queue, kind, _ in found}
        pairs.update((labels.queue(queue), labels.kind(kind)) for queue, kind in registered)
        bounded = (
            f"at most {LABEL_VALUES} queue and {LABEL_VALUES} kind values, the rest summed as "
            f"{OTHER}."
        )
        if by_state:
            family = GaugeMetricFamily(
                "jobtable_jobs_by_state",
                "Unfinished jobs by queue, kind and state (scheduled, available, retrying or "
                f"running: jobtable_jobs split as the dashboard shows it); {bounded}",
                labels=["queue", "kind", "state"],
            )
            splits: tuple[str, ...] = SCRAPED_STATES
        else:
            family = GaugeMetricFamily(
                "jobtable_jobs",
                f"Unfinished jobs by queue, kind and status (queued, scheduled or running); {bounded}",
                labels=["queue", "kind", "status"],
            )
            splits = SCRAPED_STATUSES
        for queue, kind in sorted(pairs):
            for split in splits:
                family.add_metric([queue, kind, split], found.get((queue, kind, split), 0))
        return family

    def _registered(self) -> list[tuple[str, str]]:
        """(queue, kind) of every kind registered here."""
        kinds = self._runner.kinds
        registered = []
        for name in kinds.names():
            spec = kinds.get(name)
            if spec is not None:
                registered.append((spec.queue, name))
        return registered


def _held_back(counts: list[HeldBack], labels: Labels) -> GaugeMetricFamily:
    """Due jobs limits hold back, by queue, kind and limit type (never by key value)."""
    family = GaugeMetricFamily(
        "jobtable_jobs_held_back",
        "Due jobs a limit or a rate holds back now, by queue, kind and limit (queue_limit, "
        "queue_rate, limit, rate: the first that holds each job); only where some are.",
        labels=["queue", "kind", "limit"],
    )
    summed: dict[tuple[str, str, str], int] = {}
    for each in counts:
        key = (labels.queue(each.queue), labels.kind(each.kind), each.limit)
        summed[key] = summed.get(key, 0) + each.count
    for key, count in sorted(summed.items()):
        family.add_metric(list(key), count)
    return family


def metrics_registry(runner: Runner) -> CollectorRegistry:
    """A registry of its own for one app: ``runner``'s events (when its observer is a
    ``JobMetrics``; every process's, in multiprocess mode) and the store's state."""
    registry = CollectorRegistry(auto_describe=False)
    events = getattr(runner, "observer", None)  # a stand-in runner may have none
    multiprocess_dir = os.environ.get(MULTIPROCESS_ENV)
    if multiprocess_dir:
        MultiProcessCollector(registry, path=multiprocess_dir)
    else:
        if isinstance(events, JobMetrics):
            for collector in events.collectors():
                registry.register(collector)
        ProcessCollector(registry=registry)  # this process's CPU, memory and files
    registry.register(StoreCollector(runner))
    return registry


def exposition(registry: CollectorRegistry, accept: str | None) -> tuple[bytes, str]:
    """The registry's series in the format ``accept`` asks for (Prometheus text by default)."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type
