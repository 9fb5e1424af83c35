"""The overview page: jobs by queue and state (each count a link to its list), throughput, the
last hour's charts, pause and resume, limits, live runners.

Counts are read when the page is served; the page's script reads them again
from ``/ui/data/overview`` every few seconds and works out the throughput
(jobs finished per minute) from the difference between its reads, which
every open page shares (``OverviewReads``).
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import attrs

from jobtable.core import Runner, RunnerRecord
from jobtable.core.history import History
from jobtable.core.jobs import QueueState
from jobtable.core.states import STATES
from jobtable.entrypoints import views
from jobtable.entrypoints.ui.history_panel import history_panel
from jobtable.entrypoints.ui.layout import action_form, page, scrolling_table
from jobtable.entrypoints.ui.limits_panel import limit_rows, limits_panel
from jobtable.entrypoints.ui.markup import Markup, el, fragment
from jobtable.entrypoints.ui.shown import queue_href, when

POLL_SECONDS = 5


SHARE_FACTOR = 10
"""A slow read is shared for this many times as long as it took."""


@attrs.frozen(kw_only=True)
class OverviewRead:
    queues: list[QueueState]
    runners: list[RunnerRecord]
    at: float
    """Unix seconds when it was read: the page's throughput divides by the time between."""
    limits: list[dict[str, Any]] = attrs.Factory(list)
    """The limited queues and kinds, with their use (limits_panel.py)."""
    oldest_waiting: dict[str, float] = attrs.Factory(dict)
    """Seconds each queue's oldest waiting job has been due (queues with one only)."""

    def data(self) -> Any:
        """What the page's script reads: the API's shapes of queues and runners, the limits
        panel's rows, and when."""
        return {
            "at": self.at,
            "queues": [views.queue(state) for state in self.queues],
            "runners": [views.runner(record) for record in self.runners],
            "limits": self.limits,
            "oldest_waiting": self.oldest_waiting,
        }


class OverviewReads:
    """The overview's counts, read at most so often however many pages poll them.

    Counting every job by queue and status reads the whole table (about a
    second at 1,000,000 jobs on SQLite), so the polls of every open page share
    one read for POLL_SECONDS, or for ten times as long as it took when that is
    longer. Drawing the page reads afresh (an action's outcome must show), and
    the polls get that read from then on.
    """

    def __init__(
        self,
        runner: Runner,
        *,
        wall: Callable[[], float],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._runner = runner
        self._wall = wall
        self._monotonic = monotonic
        self._lock = threading.Lock()  # one read at a time; the others wait and share it
        self._kept: OverviewRead | None = None
        self._until = 0.0

    def fresh(self) -> OverviewRead:
        with self._lock:
            return self._read()

    def shared(self) -> OverviewRead:
        with self._lock:
            if self._kept is not None and self._monotonic() < self._until:
                return self._kept
            return self._read()

    def _read(self) -> OverviewRead:
        started = self._monotonic()
        runner = self._runner
        held_back = runner.held_back()
        queues = runner.queues(held_back)
        kinds = runner.kinds
        limited_kinds = any(
            spec is not None and (spec.limit is not None or spec.rate is not None)
            for spec in map(kinds.get, kinds.names())
        )
        counts = runner.job_counts() if limited_kinds else []  # their running jobs
        waiting = [state.name for state in queues if state.states.get("available")]
        read = OverviewRead(
            queues=queues,
            runners=runner.runners(),
            at=self._wall(),
            limits=limit_rows(queues, kinds, held_back, counts),
            oldest_waiting=runner.oldest_waiting(waiting),
        )
        ended = self._monotonic()
        self._kept = read
        self._until = ended + max(POLL_SECONDS, SHARE_FACTOR * (ended - started))
        return read


def _age(seconds: float | None) -> str:
    """How long a job has waited, in its largest whole unit (as the page's script writes it)."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min" if whole < 3600 else f"{whole // 3600} h"


def _jobs_href(**filters: str) -> str:
    return "/ui/jobs?" + urllib.parse.urlencode(filters)


def _totals(queues: list[QueueState]) -> Markup:
    cards = [
        el(
            "a",
            el("span", state.replace("_", " "), class_="label"),
            el("span", sum(q.states.get(state, 0) for q in queues), data_total=state),
            href=_jobs_href(state=state),
            class_=f"card state-card state-{state}",
        )
        for state in STATES
    ]
    throughput = el(
        "div",
        el("span", "finished / min", class_="label"),
        el("span", "measuring…", data_rate="*"),
        class_="card rate",
    )
    return el("section", cards, throughput, class_="cards", aria_label="totals")


def _queue_row(state: QueueState, csrf: str, oldest: float | None) -> Markup:
    toggle = "resume" if state.paused else "pause"
    finished = (state.counts.get("succeeded", 0), state.counts.get("failed", 0))
    return el(
        "tr",
        el("th", el("a", state.name, href=_jobs_href(queue=state.name)), scope="row"),
        el("td", el("span", "paused" if state.paused else "active", class_=f"state-{toggle}")),
        [
            el(
                "td",
                el(
                    "a",
                    state.states.get(name, 0),
                    href=_jobs_href(queue=state.name, state=name),
                    class_="count",
                ),
                data_state=name,
            )
            for name in STATES
        ],
        el("td", views.queue_limit_text(state) or "—"),
        el("td", state.held_back, data_held="*"),
        el("td", _age(oldest), data_oldest="*"),
        el("td", "…", data_rate=state.name),
        el("td", action_form(queue_href(state.name, toggle), toggle.capitalize(), csrf=csrf)),
        data_queue=state.name,
        data_paused="true" if state.paused else "false",
        data_succeeded=str(finished[0]),
        data_failed=str(finished[1]),
        **_limit_data(state),
    )


def _limit_data(state: QueueState) -> dict[str, str]:
    """The queue's limits as its row's data: the page's script redraws it when they change."""
    rate = state.limit.rate
    return {
        "data_limit": "" if state.limit.running is None else str(state.limit.running),
        "data_rate_n": "" if rate is None else str(rate.n),
        "data_rate_per": "" if rate is None else repr(rate.per),
    }


def _queues(queues: list[QueueState], csrf: str, oldest: dict[str, float]) -> Markup:
    heads = [
        "Queue",
        "",
        *(s.replace("_", " ").capitalize() for s in STATES),
        "Limits",
        "Held back",
        "Oldest waiting",
        "Finished / min",
        "",
    ]
    rows = [_queue_row(state, csrf, oldest.get(state.name)) for state in queues]
    return el(
        "section",
        el("h2", "Queues"),
        scrolling_table(heads, rows, empty="No queue holds a job yet."),
        id="queues",
    )


RUNNER_HEADS = ("Runner", "Host", "PID", "Kinds", "Queues", "Workers", "Busy", "Last seen")


def _runner_row(record: RunnerRecord) -> Markup:
    info = record.info
    return el(
        "tr",
        el("td", info.id, class_="id"),
        el("td", info.host),
        el("td", info.pid),
        el("td", ", ".join(info.kinds)),
        el("td", "all" if info.queues is None else ", ".join(info.queues)),
        el("td", info.workers),
        el("td", record.busy),
        el("td", when(record.last_seen)),
    )


def _runners(runners: list[RunnerRecord]) -> Markup:
    rows = [_runner_row(record) for record in runners]
    return el(
        "section",
        el("h2", "Live runners"),
        scrolling_table(RUNNER_HEADS, rows, empty="No runner is live.", id="runners"),
    )


def render_overview(
    read: OverviewRead, *, csrf: str, history: History | None = None, kinds: list[str] | None = None
) -> str:
    content = fragment(
        _totals(read.queues),
        _queues(read.queues, csrf, read.oldest_waiting),
        history is not None and history_panel(history, kinds or []),
        limits_panel(read.limits),
        _runners(read.runners),
    )
    return page(
        "Overview",
        content,
        name="overview",
        csrf=csrf,
        data={"poll": str(POLL_SECONDS), "at": repr(read.at), "source": "/ui/data/overview"},
    )
