"""Values as a person reads them on the dashboard: times, results, statuses, ids."""

from __future__ import annotations

import datetime
import json
import urllib.parse
from typing import Any

from jobtable.entrypoints.ui.markup import Markup, el

STATUSES = ("queued", "running", "succeeded", "failed")


def when(value: datetime.datetime | None) -> Markup | str:
    """A ``<time>`` in UTC, to the second; an empty cell when there is none."""
    if value is None:
        return "—"
    utc = value.astimezone(datetime.UTC)
    return el("time", utc.strftime("%Y-%m-%d %H:%M:%S UTC"), datetime=utc.isoformat())


def result_text(result: Any) -> str:
    """A result's JSON, indented for reading (still escaped where it is shown)."""
    return json.dumps(result, indent=2, ensure_ascii=False)


def status_badge(status: str, *, field: str | None = None) -> Markup:
    return el("span", status, class_=f"status status-{status}", data_field=field)


def job_href(job_id: str) -> str:
    return "/ui/jobs/" + urllib.parse.quote(job_id, safe="")


def queue_href(queue: str, action: str) -> str:
    return f"/ui/queues/{urllib.parse.quote(queue, safe='')}/{action}"
