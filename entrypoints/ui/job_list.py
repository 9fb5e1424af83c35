"""The job list: newest first, filtered by status, state, kind, queue or a piece of an id, a
page at a time, with the bulk actions its filter allows.

Pages follow each other by the ids the store gives (keyset pagination):
"Older" carries the last id of the page, "Newer" the first, each with the filters.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
import uuid
from collections.abc import Iterable
from typing import Any

import attrs

from jobtable.core import Job
from jobtable.core.bulk import BulkAction
from jobtable.core.jobs import JobPage
from jobtable.core.states import STATES
from jobtable.entrypoints.ui.layout import page, scrolling_table
from jobtable.entrypoints.ui.markup import Markup, el, fragment
from jobtable.entrypoints.ui.shown import STATUSES, ago, short_id, status_badge

PAGE_SIZE = 50
RESULT_CHARS = 120
"""How much of a result a row shows; the job's page shows all of it."""


FILTER_FIELDS = ("status", "state", "kind", "queue", "id")


@attrs.frozen(kw_only=True)
class Filters:
    status: str = ""
    state: str = ""
    kind: str = ""
    queue: str = ""
    id: str = ""

    def query(self, **more: str) -> str:
        fields = {**attrs.asdict(self), **more}
        return urllib.parse.urlencode({k: v for k, v in fields.items() if v})

    def bulk_actions(self) -> list[BulkAction]:
        """The bulk actions this filter can be given to: none without a state, kind or queue
        (a whole table is the CLI's to change), none filtered by status or id (a bulk filter
        has neither), and only those that apply to its state."""
        if self.status or self.id or not (self.state or self.kind or self.queue):
            return []
        return [
            action
            for action in BulkAction
            if not self.state or self.state in {state.value for state in action.states}
        ]


@attrs.frozen(kw_only=True)
class Choices:
    """What the filters' dropdowns offer: the kinds and queues this process knows of."""

    kinds: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()


def created_at(job_id: str) -> datetime.datetime | None:
    """The creation time a UUIDv7 id carries (ids of other shapes, from older data: None)."""
    try:
        parsed = uuid.UUID(job_id)
    except ValueError:
        return None
    if parsed.version != 7:
        return None
    return datetime.datetime.fromtimestamp((parsed.int >> 80) / 1000, tz=datetime.UTC)


def result_preview(result: Any) -> str:
    if result is None:
        return "—"
    text = json.dumps(result, ensure_ascii=False)
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"


def _select(name: str, label: str, values: Iterable[str], chosen: str) -> Markup:
    shown = sorted({*values, chosen} - {""})
    options = [el("option", f"any {label.lower()}", value="")] + [
        el("option", value, value=value, selected=value == chosen) for value in shown
    ]
    return el("label", label, el("select", options, name=name))


def _known(name: str, label: str, values: Iterable[str], chosen: str) -> Markup:
    """A text field offering the known ``values`` as a dropdown; any other name may be typed."""
    listed = f"known-{name}s"
    return el(
        "label",
        label,
        el("input", type="text", name=name, value=chosen, list=listed, placeholder=f"any {name}",
           autocomplete="off", spellcheck="false"),
        el("datalist", [el("option", value=value) for value in sorted(set(values))], id=listed),
    )  # fmt: skip


def _filters_form(filters: Filters, choices: Choices) -> Markup:
    return el(
        "form",
        el(
            "label",
            "Id",
            el(
                "input",
                type="search",
                name="id",
                value=filters.id,
                placeholder="id, or its start or end",
                autocomplete="off",
                spellcheck="false",
            ),
        ),
        _select("status", "Status", STATUSES, filters.status),
        _select("state", "State", STATES, filters.state),
        _known("kind", "Kind", choices.kinds, filters.kind),
        _known("queue", "Queue", choices.queues, filters.queue),
        el("button", "Filter", type="submit"),
        el("a", "Clear", href="/ui/jobs"),
        method="get",
        action="/ui/jobs",
        class_="filters",
    )


def _row(job: Job, now: datetime.datetime) -> Markup:
    return el(
        "tr",
        el("td", short_id(job.id), class_="id"),
        el("td", job.kind),
        el("td", status_badge(job.status.value)),
        el("td", job.state or "", class_="state"),
        el("td", job.error or ""),
        el("td", result_preview(job.result), class_="result-cell"),
        el("td", ago(created_at(job.id), now)),
        data_job=job.id,
    )


def _pager(filters: Filters, found: JobPage) -> Markup:
    newer = found.newer_before
    older = found.next_after
    return el(
        "nav",
        newer and el("a", "Newest", href=f"/ui/jobs?{filters.query()}"),
        newer
        and el("a", "\u2039 Newer", href=f"/ui/jobs?{filters.query(before=newer)}", rel="prev"),
        older
        and el("a", "Older \u203a", href=f"/ui/jobs?{filters.query(cursor=older)}", rel="next"),
        class_="pager",
        aria_label="Pages",
    )


BULK_LABELS = {
    BulkAction.CANCEL: "Cancel every matching job…",
    BulkAction.RETRY: "Retry every matching job…",
}


def _bulk_links(filters: Filters) -> Markup | None:
    actions = filters.bulk_actions()
    if not actions:
        return None
    return el(
        "p",
        [
            el(
                "a",
                BULK_LABELS[action],
                href=f"/ui/jobs/bulk?{filters.query(action=action.value)}",
                class_="button danger" if action is BulkAction.CANCEL else "button",
            )
            for action in actions
        ],
        class_="bulk-actions",
    )


def render_jobs(
    found: JobPage,
    *,
    filters: Filters,
    choices: Choices,
    now: datetime.datetime,
    problem: str | None,
    notice: str | None,
    csrf: str,
) -> str:
    heads = ("Id", "Kind", "Status", "State", "Error", "Result", "Created")
    rows = [_row(job, now) for job in found.jobs]
    content = fragment(
        _filters_form(filters, choices),
        notice and el("p", notice, class_="notice", role="status"),
        problem and el("p", problem, class_="error", role="alert"),
        _bulk_links(filters),
        scrolling_table(heads, rows, empty="No job matches.", id="jobs"),
        _pager(filters, found),
    )
    return page("Jobs", content, name="jobs", csrf=csrf)
