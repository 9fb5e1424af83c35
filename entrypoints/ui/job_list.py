"""The job list: newest first, filtered by status, state, kind and queue, a page at a time.

Pages follow each other by the opaque cursor the store gives (keyset
pagination), carried in the "Next page" link with the filters.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
import uuid
from typing import Any

import attrs

from jobtable.core import Job
from jobtable.core.states import STATES
from jobtable.entrypoints.ui.layout import page
from jobtable.entrypoints.ui.markup import Markup, el, fragment
from jobtable.entrypoints.ui.shown import STATUSES, job_href, status_badge, when

PAGE_SIZE = 50
RESULT_CHARS = 120
"""How much of a result a row shows; the job's page shows all of it."""


@attrs.frozen(kw_only=True)
class Filters:
    status: str = ""
    state: str = ""
    kind: str = ""
    queue: str = ""

    def query(self, **more: str) -> str:
        fields = {**attrs.asdict(self), **more}
        return urllib.parse.urlencode({k: v for k, v in fields.items() if v})


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


def _filters_form(filters: Filters) -> Markup:
    statuses = [el("option", "any status", value="")] + [
        el("option", status, value=status, selected=status == filters.status) for status in STATUSES
    ]
    states = [el("option", "any state", value="")] + [
        el("option", state, value=state, selected=state == filters.state) for state in STATES
    ]
    return el(
        "form",
        el("label", "Status", el("select", statuses, name="status")),
        el("label", "State", el("select", states, name="state")),
        el("label", "Kind", el("input", type="text", name="kind", value=filters.kind)),
        el("label", "Queue", el("input", type="text", name="queue", value=filters.queue)),
        el("button", "Filter", type="submit"),
        el("a", "Clear", href="/ui/jobs"),
        method="get",
        action="/ui/jobs",
        class_="filters",
    )


def _row(job: Job) -> Markup:
    return el(
        "tr",
        el("td", el("a", job.id, href=job_href(job.id)), class_="id"),
        el("td", job.kind),
        el("td", status_badge(job.status.value)),
        el("td", job.state or "", class_="state"),
        el("td", job.error or ""),
        el("td", result_preview(job.result), class_="result-cell"),
        el("td", when(created_at(job.id))),
        data_job=job.id,
    )


def render_jobs(
    jobs: tuple[Job, ...],
    *,
    filters: Filters,
    next_after: str | None,
    paged: bool,
    problem: str | None,
    csrf: str,
) -> str:
    heads = ("Id", "Kind", "Status", "State", "Error", "Result", "Created")
    rows = [_row(job) for job in jobs] or [
        el("tr", el("td", "No job matches.", colspan=len(heads)))
    ]
    pager = el(
        "p",
        paged and el("a", "First page", href=f"/ui/jobs?{filters.query()}"),
        paged and next_after and " · ",
        next_after and el("a", "Next page", href=f"/ui/jobs?{filters.query(cursor=next_after)}"),
        class_="pager",
    )
    content = fragment(
        _filters_form(filters),
        problem and el("p", problem, class_="error", role="alert"),
        el(
            "table",
            el("thead", el("tr", [el("th", h) for h in heads])),
            el("tbody", rows),
            id="jobs",
        ),
        pager,
    )
    return page("Jobs", content, name="jobs", csrf=csrf)
