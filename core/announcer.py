"""Which store calls announce what, in one table: a runner's writes poke readers and claimers.

A job's readers (``JobChanges``) hear of each job a write changed; the other runners of the
process hear of work it made claimable. Run around every store call (core/around.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jobtable.core.around import Call, StoreHook
from jobtable.core.changes import JobChanges
from jobtable.core.jobs import RetryOutcome


class Tell:
    """What one announcement can say: a job changed, some job changed, work is claimable."""

    def __init__(self, changes: JobChanges, claimer: object) -> None:
        self._changes = changes
        self._claimer = claimer

    def job(self, job_id: str) -> None:
        self._changes.changed(job_id)

    def some_job(self) -> None:
        self._changes.changed_somewhere()

    def work(self, queue: str | None = None) -> None:
        """Jobs of ``queue`` (None: any) may be claimable: the other runners here look."""
        self._changes.work_for(queue, besides=self._claimer)


Announce = Callable[[Tell, Call, Any], None]
"""Tells what one call did, from its arguments and its result."""


def _claimed(tell: Tell, call: Call, claimed: Any) -> None:
    if claimed is not None:
        tell.job(claimed.id)


def _recorded(tell: Tell, call: Call, result: Any) -> None:
    tell.job(call.argument(0, "claim").job_id)


def _recorded_and_claimed(tell: Tell, call: Call, result: Any) -> None:
    for claim, _ in call.argument(0, "outcomes"):
        tell.job(claim.job_id)
    for job in result[1]:
        tell.job(job.id)


def _batch_ran(tell: Tell, call: Call, done: Any) -> None:
    batch = call.argument(0, "batch")
    for claim, _ in batch.outcomes:
        tell.job(claim.job_id)
    for claim, started in zip(batch.starts, done.started, strict=True):
        if started:
            tell.job(claim.job_id)
    for job in done.claimed:
        tell.job(job.id)
    if batch.give_backs:
        tell.work()  # free again: the other runners here may take them


def _held_given_back(tell: Tell, call: Call, count: Any) -> None:
    if count:
        tell.work()


def _released(tell: Tell, call: Call, result: Any) -> None:
    for claim in call.argument(0, "claims"):
        tell.job(claim.job_id)


def _settled(tell: Tell, call: Call, recovered: Any) -> None:
    for settlement in call.argument(0, "settlements"):
        for job, _ in settlement.outcomes:
            tell.job(job.claim.job_id)
    if recovered.requeued or recovered.failed:
        tell.work()  # queued again, or a limited kind's slot freed: workers look


def _created(tell: Tell, call: Call, result: Any) -> None:
    tell.work(call.argument(0, "job").queue)


def _created_many(tell: Tell, call: Call, result: Any) -> None:
    for queue in {job.queue for job in call.argument(0, "jobs")}:
        tell.work(queue)


def _created_in(tell: Tell, call: Call, result: Any) -> None:
    tell.work(call.argument(1, "job").queue)


def _promoted(tell: Tell, call: Call, promoted: Any) -> None:
    if promoted:
        tell.work()


def _paused_or_resumed(tell: Tell, call: Call, result: Any) -> None:
    if not call.kwargs["paused"]:
        tell.work(call.argument(0, "name"))


def _limited(tell: Tell, call: Call, result: Any) -> None:
    tell.work(call.argument(0, "name"))  # runners learn of it, and a lifted one lets jobs run


def _cancelled(tell: Tell, call: Call, result: Any) -> None:
    tell.job(call.argument(0, "job_id"))


def _retried(tell: Tell, call: Call, outcome: Any) -> None:
    tell.job(call.argument(0, "job_id"))
    if outcome is RetryOutcome.RETRIED:
        tell.work()  # queued again: the runner serving its queue may be another


def _bulk_cancelled(tell: Tell, call: Call, batch: Any) -> None:
    for job_id in (*batch.changed, *batch.stop_requested):
        tell.job(job_id)


def _bulk_retried(tell: Tell, call: Call, batch: Any) -> None:
    for job_id in batch.changed:
        tell.job(job_id)
    if batch.changed:
        tell.work()


def _pruned(tell: Tell, call: Call, pruned: Any) -> None:
    if pruned.jobs:
        tell.some_job()  # a stream of a job that is gone ends


ANNOUNCES: Mapping[str, Announce] = {
    "claim_next": _claimed,
    "publish": _recorded,
    "record": _recorded,
    "record_and_claim": _recorded_and_claimed,
    "run_batch": _batch_ran,
    "give_back_held": _held_given_back,
    "put_back": _released,
    "settle_dead": _settled,
    "create": _created,
    "create_many": _created_many,
    "create_in": _created_in,
    "promote_due": _promoted,
    "set_queue_paused": _paused_or_resumed,
    "set_queue_limit": _limited,
    "cancel": _cancelled,
    "retry": _retried,
    "cancel_jobs": _bulk_cancelled,
    "retry_jobs": _bulk_retried,
    "prune": _pruned,
}
"""What each store method that changes something announces once it has returned."""


class Announcer(StoreHook):
    """Announces each change a runner's store call made, to ``changes``, as ``ANNOUNCES`` says.

    ``claimer`` is the runner making the calls: it is not woken by its own writes.
    """

    def __init__(self, changes: JobChanges, claimer: object) -> None:
        self._tell = Tell(changes, claimer)

    def hooks(self, method: str) -> bool:
        return method in ANNOUNCES

    def after(self, call: Call, result: Any) -> None:
        ANNOUNCES[call.method](self._tell, call, result)
