"""Values as a person reads them on the dashboard: times, results, statuses, ids."""

from __future__ import annotations

import datetime
import json
import urllib.parse
from typing import Any

from jobtable.entrypoints.ui.markup import Markup, el, fragment

STATUSES = ("queued", "running", "succeeded", "failed")


def when(value: datetime.datetime | None) -> Markup | str:
    """A ``<time>`` in UTC, to the second; an empty cell when there is none."""
    if value is None:
        return "—"
    utc = value.astimezone(datetime.UTC)
    return el("time", utc.strftime("%Y-%m-%d %H:%M:%S UTC"), datetime=utc.isoformat())


def ago(value: datetime.datetime | None, now: datetime.datetime) -> Markup | str:
    """A ``<time>`` saying how long before ``now`` (or after it), the UTC time on hover."""
    if value is None:
        return "—"
    utc = value.astimezone(datetime.UTC)
    return el(
        "time",
        relative((now - utc).total_seconds()),
        datetime=utc.isoformat(),
        title=utc.strftime("%Y-%m-%d %H:%M:%S UTC"),
    )


def relative(seconds: float) -> str:
    """``12 s ago``, ``3 min ago``, ``in 2 h``: the largest whole unit."""
    span = abs(seconds)
    if span < 1:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if span >= size:
            amount = f"{int(span // size)} {unit}"
            return f"in {amount}" if seconds < 0 else f"{amount} ago"
    return "just now"


SHORT_ID = 8
"""Characters of an id a list shows: its end, the random part (its start is the time)."""


def short_id(job_id: str) -> Markup:
    """A job's link by the end of its id, the whole id on hover, and a button that copies it."""
    return fragment(
        el("a", "…" + job_id[-SHORT_ID:], href=job_href(job_id), title=job_id, class_="short-id"),
        el(
            "button",
            "copy",
            type="button",
            class_="copy",
            data_copy=job_id,
            title="Copy the whole id",
            aria_label="Copy the id " + job_id,
        ),
    )


def result_text(result: Any) -> str:
    """A result's JSON, indented for reading (still escaped where it is shown)."""
    return json.dumps(result, indent=2, ensure_ascii=False)


def status_badge(status: str, *, field: str | None = None) -> Markup:
    return el("span", status, class_=f"status status-{status}", data_field=field)


def job_href(job_id: str) -> str:
    return "/ui/jobs/" + urllib.parse.quote(job_id, safe="")


def queue_href(queue: str, action: str) -> str:
    return f"/ui/queues/{urllib.parse.quote(queue, safe='')}/{action}"
