"""One transaction of a runner's hot path, as the core decided it: what to record, start,
give back, claim and hold ahead, and whether its commit must be durable.

The exchange (core/exchange.py) gathers a batch from its workers; the store runs it in
one transaction (``JobQueue.run_batch``) and answers with a ``BatchDone``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping, Sequence

import attrs

from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.limits import RateLimit, RunningLimit
from jobtable.core.outcome import Outcome


@attrs.frozen(kw_only=True)
class Batch:
    """What one transaction does, in this order."""

    outcomes: Sequence[tuple[Claim, Outcome]] = ()
    """Decided outcomes of attempts that ran, each recorded as ``JobQueue.record`` would."""
    give_backs: Sequence[Claim] = ()
    """Jobs held ahead that no worker here will start: free for any runner again."""
    starts: Sequence[Claim] = ()
    """Jobs held ahead that a worker starts now: running under their claim, attempt counted."""
    claim: int = 0
    """How many due jobs to claim running at once (for workers free now)."""
    hold: int = 0
    """How many due jobs to hold ahead (queued still, started later by ``starts``)."""
    limits: Mapping[str, RunningLimit] = attrs.field(factory=dict)
    """The limited kinds among those served: a claim takes their jobs only while fewer than
    the limit run (per key where keyed), counted across every runner, and never holds them
    ahead."""
    rates: Mapping[str, RateLimit] = attrs.field(factory=dict)
    """The rate-limited kinds among those served: a claim takes their jobs only while fewer
    than the rate started in its window (per key where keyed), and records each start."""
    fair: frozenset[str] = frozenset()
    """The fair kinds among those served: within a priority their keys take turns, round
    robin, when claimed; never held ahead."""
    limited_queues: frozenset[str] = frozenset()
    """Queues the runner last saw an operator limit (``set_queue_limit``): claimed apart,
    under their limits as the store reads them then. A queue limited since is passed over
    until the runner learns of it from ``BatchDone.limited_queues``."""
    clock: Callable[[], datetime.datetime] | None = attrs.field(default=None, eq=False)
    """Reads the caller's clock once the claim's locks are held: what a rate's starts are
    stamped and counted by (a reading taken before a wait for the lock would be stale).
    None: ``now`` as given."""
    durable: bool = True
    """Whether the commit must survive a power loss before this returns. A batch that
    records no outcome may commit without waiting for the disk: should it be lost, its
    starts and holds are lost with it and nothing ran twice (a job only ever runs once
    its start committed, and crash recovery settles it as it would any)."""

    def served_rules(
        self, kinds: Collection[str] | None, queues: Collection[str] | None = None
    ) -> Batch | None:
        """Its limits, rates and fair keys of the ``kinds`` served, and its limited queues
        among ``queues`` (an empty batch carrying them); None when none apply, as for every
        runner without them."""
        limited_queues = frozenset(
            name for name in self.limited_queues if queues is None or name in queues
        )
        if not (kinds and (self.limits or self.rates or self.fair)) and not limited_queues:
            return None
        kinds = kinds or ()
        rules = Batch(
            limits={kind: limit for kind, limit in self.limits.items() if kind in kinds},
            rates={kind: rate for kind, rate in self.rates.items() if kind in kinds},
            fair=frozenset(kind for kind in self.fair if kind in kinds),
            limited_queues=limited_queues,
            clock=self.clock,
        )
        if rules.limits or rules.rates or rules.fair or rules.limited_queues:
            return rules
        return None

    @property
    def kinds_apart(self) -> frozenset[str]:
        """The kinds whose claims count slots or take turns: never in a plain claim."""
        return frozenset(self.limits.keys() | self.rates.keys() | self.fair)

    @property
    def empty(self) -> bool:
        return not (self.outcomes or self.give_backs or self.starts or self.claim or self.hold)


@attrs.frozen(kw_only=True)
class BatchDone:
    """What a batch came to."""

    recorded: list[bool] = attrs.Factory(list)
    """Per outcome, in order: recorded (False: its claim was stale)."""
    started: list[bool] = attrs.Factory(list)
    """Per start, in order: started (False: cancelled, or given back, since it was held)."""
    claimed: list[ClaimedJob] = attrs.Factory(list)
    """Jobs claimed running, in claim order."""
    held: list[ClaimedJob] = attrs.Factory(list)
    """Jobs held ahead, in claim order; each claim has the attempt its start will make."""
    rate_opens_at: datetime.datetime | None = None
    """When a due job a rate held back may start: the runner looks again then."""
    limited_queues: frozenset[str] | None = None
    """The queues an operator limits, as the claim read them (None: it claimed nothing):
    the runner claims them apart from its next batch on."""


def learning_limited_queues(run: Callable[[Batch], BatchDone], batch: Batch) -> BatchDone:
    """Run ``batch`` (``run``: a store's ``run_batch``); when its claim fell short and its reply
    names limited queues it did not know, claim the rest once more, knowing them (nothing
    else is done again). For callers that keep no runner's knowledge between batches."""
    done = run(batch)
    learnt = done.limited_queues
    short = batch.claim - len(done.claimed)
    if short <= 0 or learnt is None or learnt <= batch.limited_queues:
        return done
    again = run(
        Batch(
            claim=short,
            limits=batch.limits,
            rates=batch.rates,
            fair=batch.fair,
            limited_queues=learnt,
            clock=batch.clock,
        )
    )
    openings = [at for at in (done.rate_opens_at, again.rate_opens_at) if at is not None]
    return attrs.evolve(
        done,
        claimed=done.claimed + again.claimed,
        rate_opens_at=min(openings) if openings else None,
        limited_queues=learnt,
    )
