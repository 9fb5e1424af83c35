"""Why a job is not running: the answer a job's detail gives, in plain sentences.

No peer answers this per job. The answer comes from what the store already
holds (the job's row, paused queues, the registry of live runners) and is
worked out here, purely, so every engine and every surface (HTTP, CLI,
dashboard) says the same thing.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection

from jobtable.core.held_back import QUEUE_LIMIT, QueueUse
from jobtable.core.jobs import JobDetail
from jobtable.core.limits import Limit, Rate
from jobtable.core.liveness import RunnerRecord
from jobtable.core.status import Status

StartTimes = tuple[list[datetime.datetime], list[datetime.datetime]]


def _none_running() -> tuple[int, int]:
    return (0, 0)


def _no_starts(since: datetime.datetime) -> StartTimes:
    return [], []


def _no_queue_limit() -> QueueUse | None:
    return None


def why_waiting(
    detail: JobDetail,
    *,
    now: datetime.datetime,
    paused: Collection[str],
    runners: Collection[RunnerRecord],
    ahead: Callable[[], int],
    limit: Limit | None = None,
    running: Callable[[], tuple[int, int]] = _none_running,
    rate: Rate | None = None,
    starts: Callable[[datetime.datetime], StartTimes] = _no_starts,
    queue_use: Callable[[], QueueUse | None] = _no_queue_limit,
) -> list[str]:
    """Every reason the job is not running now; empty for a running or finished job.

    ``ahead`` counts the due jobs before it (called only when it is due and
    could be claimed, since it costs a query). ``limit`` is its kind's
    concurrency limit, if any, and ``running`` counts the jobs running of its
    kind and of its kind and key (called only when a limit could hold it back);
    ``rate`` is its kind's rate, if any, and ``starts`` the start times of its kind and of
    its kind and rate key since the time it is given, oldest first; ``queue_use`` reads its
    queue's limits and their use (None: it has none; called only when they could hold it).
    """
    if detail.job.status is not Status.QUEUED:
        return []
    reasons: list[str] = []
    if detail.last_code is not None and detail.attempt > 0:
        reasons.append(
            f"retrying: attempt {detail.attempt} of {detail.max_attempts} ended "
            f"with {detail.last_code}"
        )
    if detail.run_at > now:
        reasons.append(f"due at {detail.run_at.astimezone(datetime.UTC).isoformat()}")
    if detail.queue in paused:
        reasons.append(f"queue {detail.queue} is paused")
    kind, queue = detail.job.kind, detail.queue
    serving = [
        runner
        for runner in runners
        if kind in runner.info.kinds and (runner.info.queues is None or queue in runner.info.queues)
    ]
    if not serving:
        if not any(kind in runner.info.kinds for runner in runners):
            reasons.append(f"no live runner serves kind {kind}")
        else:
            reasons.append(f"no live runner of kind {kind} serves queue {queue}")
    claimable = detail.run_at <= now and detail.queue not in paused and bool(serving)
    use = queue_use() if claimable else None
    if use is not None and use.full is not None:
        reasons.append(_held_by_queue(use))
        return reasons
    if claimable and limit is not None:
        of_kind, of_key = running()
        if of_kind >= limit.n and not limit.keyed:
            reasons.append(f"held back by its kind's limit: {of_kind} of {limit.n} running")
            return reasons
        if limit.keyed and of_key >= limit.n:
            reasons.append(f"held back by its key's limit: {of_key} of {limit.n} running")
            return reasons
    if claimable and rate is not None:
        per = datetime.timedelta(seconds=rate.per)
        started_of_kind, started_of_key = starts(now - per)
        times = started_of_key if rate.keyed else started_of_kind
        if len(times) >= rate.n:
            opens = (times[len(times) - rate.n] + per).astimezone(datetime.UTC).isoformat()
            whose = "key" if rate.keyed else "kind"
            reasons.append(
                f"held back by its {whose}'s rate: {len(times)} of {rate.n} starts in "
                f"{rate.per:g} s; may start at {opens}"
            )
            return reasons
    if claimable:
        count = ahead()
        if count:
            reasons.append(f"{count} jobs ahead of it")
        else:
            busy = all(runner.busy >= runner.info.workers for runner in serving)
            reasons.append(
                "every worker that serves it is busy" if busy else "next in line: about to run"
            )
    return reasons


def _held_by_queue(use: QueueUse) -> str:
    """Why a queue's own limit or rate holds its due jobs back now."""
    if use.full == QUEUE_LIMIT:
        return f"held back by its queue's limit: {use.running} of {use.limit.running} running"
    rate, opens = use.limit.rate, use.opens_at
    if rate is None or opens is None:  # not QUEUE_RATE after all: nothing to add
        return f"held back by its queue's limits: {use.running} running"
    return (
        f"held back by its queue's rate: {len(use.starts)} of {rate.n} starts in {rate.per:g} s; "
        f"may start at {opens.astimezone(datetime.UTC).isoformat()}"
    )
