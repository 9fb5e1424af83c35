"""The queue port's single calls (``claim_next``, ``record_and_claim``) as batches, for every
store: each is one ``run_batch``, and learns of limited queues as a runner does."""

from __future__ import annotations

import abc
import datetime
from collections.abc import Collection, Sequence

from jobtable.core.batch import Batch, BatchDone, learning_limited_queues
from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.outcome import Outcome


class BatchedCalls(abc.ABC):
    @abc.abstractmethod
    def run_batch(
        self,
        batch: Batch,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> BatchDone: ...

    def claim_next(
        self,
        *,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> ClaimedJob | None:
        _, jobs = self.record_and_claim(
            [], limit=1, runner_id=runner_id, now=now, kinds=kinds, queues=queues
        )
        return jobs[0] if jobs else None

    def record_and_claim(
        self,
        outcomes: Sequence[tuple[Claim, Outcome]],
        *,
        limit: int,
        runner_id: str,
        now: datetime.datetime,
        kinds: Collection[str] | None = None,
        queues: Collection[str] | None = None,
    ) -> tuple[list[bool], list[ClaimedJob]]:
        def run(batch: Batch) -> BatchDone:
            return self.run_batch(batch, runner_id=runner_id, now=now, kinds=kinds, queues=queues)

        done = learning_limited_queues(run, Batch(outcomes=outcomes, claim=limit))
        return done.recorded, done.claimed
