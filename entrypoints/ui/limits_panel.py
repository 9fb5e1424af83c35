"""The overview's limits panel: each limited queue and each kind registered here with a limit
or a rate, what of it is in use, and how many due jobs it holds back now.

Read with the overview (``limit_rows``) and redrawn by the page's script from the same data
every poll, so an operator sees a limit fill and drain without reloading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jobtable.core.held_back import HeldBack
from jobtable.core.jobs import JobCount, QueueState
from jobtable.core.kinds import KindRegistry
from jobtable.entrypoints.ui.layout import scrolling_table
from jobtable.entrypoints.ui.markup import Markup, el

HEADS = ("Limited", "Limit", "Rate", "Running", "Held back")


def limit_rows(
    queues: Sequence[QueueState],
    kinds: KindRegistry,
    held_back: Sequence[HeldBack],
    counts: Sequence[JobCount],
) -> list[dict[str, Any]]:
    """One row per limited queue, then per limited kind: the shapes the page's data carries."""
    rows = [
        {
            "what": "queue",
            "name": state.name,
            "limit": "—" if state.limit.running is None else str(state.limit.running),
            "rate": "—"
            if state.limit.rate is None
            else f"{state.limit.rate.n}/{state.limit.rate.per:g}s",
            "running": state.counts.get("running", 0),
            "held_back": state.held_back,
        }
        for state in queues
        if not state.limit.empty
    ]
    for name in kinds.names():
        spec = kinds.get(name)
        if spec is None or (spec.limit is None and spec.rate is None):
            continue
        limit, rate = spec.limit, spec.rate
        rows.append(
            {
                "what": "kind",
                "name": name,
                "limit": "—"
                if limit is None
                else f"{limit.n}" + (" per key" if limit.keyed else ""),
                "rate": "—"
                if rate is None
                else f"{rate.n}/{rate.per:g}s" + (" per key" if rate.keyed else ""),
                "running": sum(c.count for c in counts if c.kind == name and c.status == "running"),
                "held_back": sum(each.count for each in held_back if each.kind == name),
            }
        )
    return rows


def limits_panel(rows: Sequence[dict[str, Any]]) -> Markup | str:
    """The panel; nothing when no queue or kind here is limited."""
    if not rows:
        return ""
    body = [
        el(
            "tr",
            el("th", f"{row['what']} {row['name']}", scope="row"),
            el("td", row["limit"]),
            el("td", row["rate"]),
            el("td", row["running"], data_limit_running=""),
            el("td", row["held_back"], data_limit_held=""),
            data_limited=f"{row['what']}:{row['name']}",
        )
        for row in rows
    ]
    return el(
        "section",
        el("h2", "Limits"),
        scrolling_table(HEADS, body, empty=""),  # never empty: no rows, no panel
        id="limits",
    )
