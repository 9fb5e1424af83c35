"""What passes through a runner's job exchange (core/exchange.py): a worker's request for a
job, an outcome handed in and not yet written, and what the exchange holds for the sweeper.
"""

from __future__ import annotations

import attrs

from jobtable.core.jobs import Claim, ClaimedJob
from jobtable.core.outcome import Outcome


@attrs.frozen(kw_only=True)
class InHand:
    """What ``JobExchange.in_hand`` reads: claims held beside the attempts, the batch in flight."""

    claims: set[Claim]
    batch_in_flight: int | None


class Want:
    """One worker's request for a job, filled in by the batch that served it."""

    __slots__ = ("done", "error", "held", "job", "lane")

    def __init__(self, lane: int) -> None:
        self.lane = lane
        """Whose kinds it takes: 0, the threads' (sync handlers); 1, the async slots'."""
        self.held: ClaimedJob | None = None  # the job held ahead chosen to start for it
        self.job: ClaimedJob | None = None
        self.error: Exception | None = None
        self.done = False


class Unsent:
    """An outcome handed in and not yet written."""

    __slots__ = ("claimed", "outcome", "since")

    def __init__(self, claimed: ClaimedJob, outcome: Outcome, since: float) -> None:
        self.claimed = claimed
        self.outcome = outcome
        self.since = since
