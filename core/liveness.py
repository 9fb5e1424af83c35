"""Liveness: when a runner may claim, when it must stop its handlers, when others may settle it.

Pure policy, fed with the caller's monotonic readings (never two hosts' wall
clocks). A runner proves it is alive in two ways a store provides:

- a *lock* that dies with its process or database session (an OS file lock,
  an advisory lock), which makes a crash visible within a sweep or two;
- a *beat*, a counter in its row of the runners table, which survives what a
  lock cannot: a failover to a standby (locks are not replicated) and a
  connection pooler. It is raised only when there is something to say
  (``OwnLiveness.must_beat``): every sweep while the runner runs jobs, where
  the store's liveness can run out; when its count of running jobs changes;
  after its lock was taken again or its row went missing; and, idle, often
  enough to keep a lease. Where the lock is proof enough (a file lock on one
  host), an idle runner writes nothing at all.

Observers settle a runner's jobs only when its death is certain:

- *fast*: its lock is absent (or it has no row) on consecutive sweeps that
  span at least FAST_WINDOW (two sweeps), and its beat did not move in all
  that time, while the owner re-checks its own lock ten times a second (every
  0.4 s while idle) and re-takes it at once if it was lost; the store re-checks that evidence, and
  holds the lock itself, in the transaction that settles the jobs;
- *lease*: where a store says so, its beat has not moved for ``lease``
  seconds of an observer's continuous watch.

The owner keeps its side: it claims only while its lock was confirmed within
the last sweep, and it stops its handlers before either rule could fire
against it: ``margin`` seconds before its lease or its lock session's
server-side timeout runs out, and, when it knows its lock is absent (the
server answered, or the file could not be made again) and cannot take it
back, within half the fast window.

Times an observer records are conservative: a sighting counts from when its
query returned, and is compared from when the next one was sent, so a slow
sweep cannot make two sightings look further apart than they were.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Iterable

import attrs

from jobtable.core.jobs import HeldJob
from jobtable.core.outcome import Outcome

CHECK_INTERVAL = 0.1
"""Seconds between the owner's checks of its own lock while it runs jobs or a worker waits
to claim: several per sweep."""

IDLE_CHECK_INTERVAL = 0.4
"""Seconds between those checks while the runner runs nothing and no worker waits (at most
0.8 of the freshness a check allows claims for: core/check_pace.py). A worker that finds
the last check too old to claim on asks for one at once."""

CHECK_TIMEOUT = 2.0
"""Seconds one check may take before the owner counts its lock unconfirmed."""

SWEEP_INTERVAL = 0.5
"""Seconds between sweeps: a beat, a look for dead runners, settling them."""

FAST_WINDOW = 2 * SWEEP_INTERVAL
"""How long an absent lock with a still beat must be watched before it is death: longer
than a busy owner's beat period, so a live owner's beat always shows within it (an idle
owner runs nothing a wrong verdict could run twice)."""

IDLE_BEATS_PER_LEASE = 1.5
"""An idle owner whose store has a lease raises its beat this many times within the lease
less its margin (PostgreSQL: every 10 s); a beat that fails is tried again at the next
sweep, so several may fail before the owner's deadline."""

LOCK_ABSENT_GRACE = FAST_WINDOW / 2
"""An owner that knows its lock is absent and cannot take it back stops its handlers
after this long: before any observer's fast window could close."""

FORGET_AFTER_SWEEPS = 10
"""An observer that saw nothing for this many sweeps (its own outage) starts its watch over."""


class LockState(enum.Enum):
    HELD = "held"
    ABSENT = "absent"
    UNKNOWN = "unknown"
    """The store cannot tell: the lock was taken on another server (before a failover or
    restart), so its absence here means nothing."""


@attrs.frozen(kw_only=True)
class RunnerInfo:
    """What a runner says of itself in the runners table."""

    id: str
    host: str
    pid: int
    started_at: datetime.datetime
    kinds: tuple[str, ...]
    queues: tuple[str, ...] | None
    """The queues it serves; None for all."""
    workers: int
    limits: tuple[tuple[str, int], ...] = ()
    """Its kinds' concurrency limits, (kind, n): claims apply the smallest any runner has."""


@attrs.frozen(kw_only=True)
class RunnerRecord:
    """A row of the runners table, as shown to operators."""

    info: RunnerInfo
    busy: int
    last_seen: datetime.datetime
    """The owner's own wall clock at its last beat, or, where the lock is the proof of life
    (SQLite), when the reader saw the lock held: for people to read, never compared."""


@attrs.frozen(kw_only=True)
class RunnerSighting:
    """What one sweep saw of a runner: its row's beat and its lock."""

    runner_id: str | None
    """None for running jobs that record no owner (rows from before owners were recorded)."""
    registered: bool
    beat: int | None
    lock: LockState
    holds_running: bool | None = None
    """Whether any job is running in its name (None: the store did not say). A runner that
    sees none in its own name and runs nothing skips its look for lost claims."""


@attrs.frozen(kw_only=True)
class DeadRunner:
    """A verdict, with the evidence the store must find unchanged before it settles."""

    runner_id: str | None
    registered: bool
    beat: int | None
    lock_absent: bool
    """The verdict rests on the lock being absent: the store checks it again."""


@attrs.frozen(kw_only=True)
class Settlement:
    """A dead runner's verdict and the outcome decided for each job it held (core/settling.py).

    The store records them only while the verdict's evidence holds, each fenced by its claim.
    """

    verdict: DeadRunner
    outcomes: tuple[tuple[HeldJob, Outcome], ...] = ()


@attrs.frozen(kw_only=True)
class LivenessTerms:
    """How a store's liveness can run out, so the owner stops its handlers first."""

    lease: float | None = None
    """Observers judge a runner dead once its beat has not moved this long (None: never)."""
    lock_timeout: float | None = None
    """The server ends a lock session that stays silent this long (None: never)."""
    idle_sweeps_slower: float = 1.0
    """How many times the sweep interval apart the sweeps of a runner that runs nothing are:
    where each sweep costs the database a transaction (PostgreSQL), an idle runner looks
    less often, though still at least a fast window apart so that a death is judged at its
    second sighting."""

    @property
    def never_run_out(self) -> bool:
        return self.lease is None and self.lock_timeout is None

    @property
    def margin(self) -> float:
        """How long before either runs out the owner stops its handlers."""
        given = [t for t in (self.lease, self.lock_timeout) if t is not None]
        return max(2.0, min(given, default=0.0) / 4)

    @property
    def idle_beat_period(self) -> float | None:
        """Seconds between an idle owner's beats to keep its lease (None: no lease to keep)."""
        if self.lease is None:
            return None
        return (self.lease - self.margin) / IDLE_BEATS_PER_LEASE


@attrs.define
class _Track:
    beat: int | None
    registered: bool
    beat_since: float
    """When this observer first saw this beat."""
    suspect_since: float | None
    """When this observer first saw the lock absent (or no row), with this beat, since."""


class DeathJudge:
    """An observer's memory of other runners across sweeps; decides which are certainly dead."""

    def __init__(self, terms: LivenessTerms, *, interval: float = SWEEP_INTERVAL) -> None:
        self._lease = terms.lease
        self._window = 2 * interval
        self._forget_after = FORGET_AFTER_SWEEPS * interval
        self._tracks: dict[str | None, _Track] = {}
        self._last: float | None = None

    def judge(
        self,
        sightings: Iterable[RunnerSighting],
        *,
        at: float,
        returned_at: float | None = None,
    ) -> list[DeadRunner]:
        """Record one sweep's sightings; return the runners now certainly dead.

        ``at`` is the monotonic time the sweep's query was sent, ``returned_at``
        when it came back (default: the same). A runner not sighted is
        forgotten. After a long gap since the last sweep this observer saw, it
        starts over: it could not watch meanwhile, so silence it did not see
        is no evidence.
        """
        seen_until = at if returned_at is None else returned_at
        if self._last is not None and at - self._last > self._forget_after:
            self._tracks = {}
        self._last = seen_until
        tracks: dict[str | None, _Track] = {}
        dead: list[DeadRunner] = []
        for seen in sightings:
            track = self._track(seen, seen_until)
            tracks[seen.runner_id] = track
            fast = track.suspect_since is not None and at - track.suspect_since >= self._window
            leased = (
                self._lease is not None and seen.registered and at - track.beat_since >= self._lease
            )
            if fast or leased:
                dead.append(
                    DeadRunner(
                        runner_id=seen.runner_id,
                        registered=seen.registered,
                        beat=seen.beat,
                        lock_absent=fast and seen.lock is LockState.ABSENT,
                    )
                )
        self._tracks = tracks
        return dead

    def _track(self, seen: RunnerSighting, at: float) -> _Track:
        before = self._tracks.get(seen.runner_id)
        unchanged = (
            before is not None and before.beat == seen.beat and before.registered == seen.registered
        )
        suspect = seen.lock is LockState.ABSENT or (
            not seen.registered and seen.lock is not LockState.HELD
        )
        suspect_since: float | None = None
        if suspect:
            earlier = before.suspect_since if before is not None and unchanged else None
            suspect_since = at if earlier is None else earlier
        return _Track(
            beat=seen.beat,
            registered=seen.registered,
            beat_since=before.beat_since if before is not None and unchanged else at,
            suspect_since=suspect_since,
        )


class OwnLiveness:
    """The owner's side: when it last confirmed its lock and its beat, and what that allows.

    Times are the monotonic readings taken *before* each confirmation was
    sent: whatever the server saw of it happened after that.
    """

    def __init__(self, terms: LivenessTerms, *, freshness: float = SWEEP_INTERVAL) -> None:
        self._terms = terms
        self._freshness = freshness
        self._lock_absent_since: float | None = None
        self._lock_ok: float | None = None
        self._beat_ok: float | None = None
        self._written_busy: int | None = None  # the busy count the runner's row holds
        self._beat_asked = False
        self._reconciling = False

    def lock_confirmed(self, sent_at: float, *, retaken: bool = False) -> None:
        """The lock was confirmed (or, with ``retaken``, lost and taken again) by a check sent then."""
        self._lock_ok = sent_at
        self._lock_absent_since = None
        if retaken:
            self._reconciling = True

    def lock_absent(self, sent_at: float) -> None:
        """A check sent then found the lock absent and could not take it back (not a timeout)."""
        if self._lock_absent_since is None:
            self._lock_absent_since = sent_at

    def beat_landed(self, sent_at: float, *, busy: int) -> None:
        """A beat (or the row's registration) sent then landed, recording ``busy`` jobs running."""
        self._beat_ok = sent_at
        self._written_busy = busy
        self._beat_asked = False
        if self._lock_ok is None:
            self._lock_ok = sent_at

    def ask_beat(self) -> None:
        """The next sweep raises the beat: the lock was taken again (its row must say where), or
        the row was not among the runners seen (judged dead: the beat finds it gone)."""
        self._beat_asked = True

    def must_beat(self, now: float, *, busy: int) -> bool:
        """Whether this sweep writes the runner's beat; a write that changes nothing is not
        made (on SQLite it would still cost a frame of the write-ahead log).

        Yes when asked to, when ``busy`` differs from what the row holds, every sweep while
        jobs run where the store's liveness can run out (the beat is then an observer's
        evidence beside the lock), and, idle, every ``idle_beat_period`` to keep a lease.
        Never otherwise: where the lock cannot run out it is the proof of life.
        """
        if self._beat_asked or busy != self._written_busy:
            return True
        if self._terms.never_run_out:
            return False
        if busy:
            return True
        period = self._terms.idle_beat_period
        if period is None:
            return False
        return self._beat_ok is None or now - self._beat_ok >= period

    def must_reconcile(self) -> None:
        """Claims wait until the runner compared the jobs held in its name with its workers'."""
        self._reconciling = True

    def reconciled(self) -> None:
        self._reconciling = False

    @property
    def reconciling(self) -> bool:
        return self._reconciling

    def may_claim(self, now: float) -> bool:
        """Only with a lock confirmed within the last sweep: never while liveness is in doubt.

        On every claim's path: the deadline is worked out only where one can exist.
        """
        if self._reconciling or self._lock_ok is None or now - self._lock_ok > self._freshness:
            return False
        if self._lock_absent_since is None and self._terms.never_run_out:
            return True
        deadline = self.handler_deadline()
        return deadline is None or now < deadline

    def handler_deadline(self) -> float | None:
        """The monotonic time by which handlers must be told to stop; None when never."""
        terms = self._terms
        deadlines = []
        if terms.lock_timeout is not None and self._lock_ok is not None:
            deadlines.append(self._lock_ok + terms.lock_timeout - terms.margin)
        if terms.lease is not None and self._beat_ok is not None:
            deadlines.append(self._beat_ok + terms.lease - terms.margin)
        if self._lock_absent_since is not None:
            deadlines.append(self._lock_absent_since + LOCK_ABSENT_GRACE)
        return min(deadlines, default=None)
