"""The dashboard's schedules page: every periodic schedule a runner recorded at start, with
its expression, time zone, queue (and whether it is paused), next run and last tick."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence

from jobtable.core.schedules import StoredSchedule
from jobtable.entrypoints.ui.layout import page, scrolling_table
from jobtable.entrypoints.ui.markup import Markup, el
from jobtable.entrypoints.ui.shown import when

HEADS = ("Schedule", "Kind", "Expression", "Time zone", "Queue", "Next run", "Last tick")


def render_schedules(schedules: Sequence[StoredSchedule], *, csrf: str) -> str:
    scrolled = scrolling_table(
        HEADS,
        [_row(stored) for stored in schedules],
        empty="No schedules: a runner lists the ones it runs when it starts.",
        class_="schedules",
    )
    return page("Schedules", el("section", scrolled), name="schedules", csrf=csrf)


def _row(stored: StoredSchedule) -> Markup:
    queue = el(
        "a", stored.queue, href="/ui/jobs?" + urllib.parse.urlencode({"queue": stored.queue}), class_="queue"
    ) if not stored.queue_paused else el(
        "span", el("a", stored.queue, href="/ui/jobs?" + urllib.parse.urlencode({"queue": stored.queue})), " (paused)",
        class_="paused",
    )  # fmt: skip
    return el(
        "tr",
        el("td", stored.name),
        el(
            "td",
            el("a", stored.kind, href="/ui/jobs?" + urllib.parse.urlencode({"kind": stored.kind})),
        ),
        el("td", el("code", stored.expression)),
        el("td", stored.timezone),
        el("td", queue),
        el("td", when(stored.next_run)),
        el("td", when(stored.last_tick)),
    )
