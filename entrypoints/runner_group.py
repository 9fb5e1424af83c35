"""The runners one ``serve`` or ``worker`` process runs over one store, as ``--queues`` asks.

Plain queue names share the ``--workers`` pool in one runner; each
``name=N`` gets a runner of its own with N workers, so a flood of one queue
cannot take the workers another queue was promised. Every runner has the
same kinds, and they start, stop (in the same two phases) and are joined
together.

Runners in one process share the store, and so miss each other's commits:
another process's enqueue reaches this one through the store's watcher, but
on SQLite a commit by this process's own connection does not move what the
watcher reads. So they share one ``JobChanges``: a write by one that may give
another work wakes it, as a watcher would (core/announcer.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

import attrs

from jobtable.core import Clock, JobStore, Runner
from jobtable.core.changes import JobChanges
from jobtable.core.jobs import Retention
from jobtable.core.observer import RunnerObserver
from jobtable.entrypoints.config import QueueServing
from jobtable.entrypoints.wiring import load_kinds


@attrs.frozen(kw_only=True)
class RunnerPlan:
    queues: frozenset[str] | None
    """The queues it claims from; None: every queue."""
    workers: int


def plan_runners(serving: QueueServing, workers: int, *, serves_api: bool) -> list[RunnerPlan]:
    """The runners to make, the one that takes the API's enqueues first.

    The shared pool serves the plain names (every queue without ``--queues``);
    each dedicated queue gets its own runner. ``serve`` with only dedicated
    queues gets an insert-only runner in front for the API: it claims nothing.
    """
    plans: list[RunnerPlan] = []
    if serving.shared is None or serving.shared:
        plans.append(RunnerPlan(queues=serving.shared, workers=workers))
    elif serves_api:
        plans.append(RunnerPlan(queues=None, workers=0))
    plans.extend(RunnerPlan(queues=frozenset({name}), workers=n) for name, n in serving.dedicated)
    return plans


def describe(plans: Collection[RunnerPlan]) -> str:
    """What the start line says of the queues: ``all``, ``none``, or ``mail+bulk:2,reports:1``."""
    claiming = [plan for plan in plans if plan.workers]
    if not claiming:
        return "none"
    if len(claiming) == 1 and claiming[0].queues is None:
        return "all"
    return ",".join(
        ("all" if plan.queues is None else "+".join(sorted(plan.queues))) + f":{plan.workers}"
        for plan in claiming
    )


class RunnerGroup:
    """Runners over one store, driven as one: the first takes the API's enqueues."""

    def __init__(
        self,
        store: JobStore,
        clock: Clock,
        plans: list[RunnerPlan],
        *,
        async_workers: int = 100,
        logger: logging.Logger | None = None,
        observer: RunnerObserver | None = None,
        retention: Retention | None = None,
    ) -> None:
        """``retention`` is kept by the first runner with workers; the others prune nothing
        (one process needs one pruner, and a lease keeps processes to one at a time).
        Each runner with workers has ``async_workers`` async slots for ``async def`` handlers."""
        if not plans:
            raise ValueError("RunnerGroup needs at least one runner")
        pruner = next((index for index, plan in enumerate(plans) if plan.workers), None)
        self.plans = list(plans)
        self.runners: list[Runner] = []
        self.changes = JobChanges()
        """One hub for every runner here: a reader hears of a job whichever runner runs it,
        and a runner of work another's writes made for it."""
        for index, plan in enumerate(self.plans):
            self.runners.append(
                Runner(
                    store,
                    clock,
                    workers=plan.workers,
                    async_workers=async_workers,
                    queues=plan.queues,
                    logger=logger,
                    observer=observer,
                    changes=self.changes,
                    retention=retention,
                    prunes=index == pruner,
                    watch=False,  # one watcher for the group: notice_jobs_from_elsewhere
                )
            )

    @property
    def first(self) -> Runner:
        return self.runners[0]

    @property
    def claiming(self) -> list[Runner]:
        """The runners with workers (an insert-only one claims nothing)."""
        return [
            runner for plan, runner in zip(self.plans, self.runners, strict=True) if plan.workers
        ]

    @property
    def workers(self) -> int:
        return sum(plan.workers for plan in self.plans)

    def load_kinds(self, modules: tuple[str, ...]) -> None:
        """Each module's ``register(kinds)`` runs once per runner: each claims every kind."""
        for runner in self.runners:
            load_kinds(runner.kinds, modules)

    def start(self) -> None:
        """Start every runner; if one cannot start, stop those that did, then raise."""
        started: list[Runner] = []
        try:
            for runner in self.runners:
                runner.start()
                started.append(runner)
        except BaseException:
            for runner in started:
                runner.stop_now()
            for runner in started:
                runner.join(timeout=5.0)
            raise

    def stop(self) -> None:
        for runner in self.runners:
            runner.stop()

    def stop_now(self) -> None:
        for runner in self.runners:
            runner.stop_now()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every runner (their workers, then their rows), all within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for runner in self.runners:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not runner.join(timeout=left):
                return False
        return True

    def notice_jobs_from_elsewhere(self) -> None:
        """Another process changed the store: every runner looks (what a watcher calls)."""
        for runner in self.runners:
            runner.notice_jobs_from_elsewhere()
