"""A job's page: its five keys, its lifecycle and attempts, why it waits, cancel and retry.

The page's script follows the job's event stream and rewrites the status,
result and error in place as they change; when the status changes it loads
the page again, so the attempts, reasons and buttons are the server's.
"""

from __future__ import annotations

from typing import Any

from jobtable.core.jobs import AttemptRecord, JobDetail
from jobtable.entrypoints import views
from jobtable.entrypoints.ui.layout import action_form, page, scrolling_table
from jobtable.entrypoints.ui.markup import Markup, el, fragment
from jobtable.entrypoints.ui.shown import job_href, result_text, status_badge, when

NOTICES = {
    "cancelled": "The job was cancelled.",
    "stopping": "The job's handler was told to stop; it is recorded cancelled when it does.",
    "cancel-refused": "The job had already finished; there was nothing to cancel.",
    "retried": "The job is queued again, with one more attempt allowed.",
    "retry-refused": "Only a failed job can be retried.",
    "retry-key-held": "Another job holds this job's unique key now: retry it once that one ends.",
}
"""What an action's redirect may announce (by a fixed name: no text comes from the URL)."""


def _five_keys(detail: JobDetail) -> Markup:
    job = detail.job
    return el(
        "dl",
        el("dt", "id"),
        el("dd", job.id, class_="id"),
        el("dt", "kind"),
        el("dd", job.kind, data_field="kind"),
        el("dt", "status"),
        el("dd", status_badge(job.status.value, field="status")),
        el("dt", "error"),
        el("dd", job.error or "—", data_field="error"),
        el("dt", "result"),
        el("dd", el("pre", result_text(job.result), data_field="result")),
        class_="keys",
    )


def _lifecycle(detail: JobDetail) -> Markup:
    rows = (
        ("state", detail.state or "—"),
        ("queue", detail.queue),
        ("priority", detail.priority),
        ("run at", when(detail.run_at)),
        ("attempt", f"{detail.attempt} of {detail.max_attempts}"),
        ("created", when(detail.created_at)),
        ("started", when(detail.started_at)),
        ("waited", _seconds(views.waited(detail))),
        ("finished", when(detail.finished_at)),
        ("timeout", "none" if detail.timeout is None else f"{detail.timeout:g} s"),
    )
    return el("dl", [fragment(el("dt", k), el("dd", v)) for k, v in rows], class_="lifecycle")


def _seconds(value: float | None) -> str:
    """A duration to the millisecond under a minute, to the second above."""
    if value is None:
        return "—"
    if value < 60:
        return f"{value:.3f} s"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _attempt_row(record: AttemptRecord) -> Markup:
    return el(
        "tr",
        el("td", record.attempt),
        el("td", record.runner_id or "—", class_="id"),
        el("td", when(record.started_at)),
        el("td", when(record.ended_at)),
        el("td", _seconds(views.attempt_seconds(record)), class_="duration"),
        el(
            "td",
            record.outcome
            if record.error_class is None
            else f"{record.outcome} ({record.error_class})",
        ),
    )


def _attempts(detail: JobDetail) -> Markup:
    heads = ("Attempt", "Runner", "Started", "Ended", "Ran", "Outcome")
    rows = [_attempt_row(record) for record in detail.attempts]
    return el(
        "section",
        el("h2", "Attempts"),
        scrolling_table(heads, rows, empty="Not run yet."),
        id="attempts",
    )


def _waiting(reasons: tuple[str, ...]) -> Markup | None:
    if not reasons:
        return None
    return el(
        "section",
        el("h2", "Why it is not running"),
        el("ul", [el("li", reason) for reason in reasons]),
        id="waiting",
    )


def _actions(detail: JobDetail, csrf: str) -> Markup:
    status = detail.job.status.value
    href = job_href(detail.job.id)
    return el(
        "section",
        status in ("queued", "running")
        and action_form(f"{href}/cancel", "Cancel", csrf=csrf, danger=True),
        status == "failed" and action_form(f"{href}/retry", "Retry", csrf=csrf),
        class_="actions",
    )


def render_job(detail: JobDetail, *, csrf: str, notice: str | None, payload: Any = None) -> str:
    if notice == "stopping" and detail.job.status.finished:
        # It stopped before this page was drawn: say what became of it.
        notice = "cancelled" if detail.job.error == "cancelled" else None
    message = NOTICES.get(notice or "")
    content = fragment(
        message and el("p", message, class_="notice", role="status"),
        _actions(detail, csrf),
        el(
            "div",
            el("section", _five_keys(detail)),
            el("section", _lifecycle(detail)),
            class_="columns",
        ),
        _waiting(detail.waiting),
        el(
            "section",
            el("h2", "Payload"),
            el("pre", "not shown" if payload is None else result_text(payload)),
            id="payload",
        ),
        _attempts(detail),
        el("p", "", class_="live", data_field="live"),
    )
    return page(
        detail.job.kind,
        content,
        name="job",
        csrf=csrf,
        crumb=fragment(
            el("a", "Jobs", href="/ui/jobs"), " / job ", el("span", detail.job.id, class_="id")
        ),
        data={
            "events": job_href(detail.job.id) + "/events",
            "version": str(detail.job.version),
            "status": detail.job.status.value,
        },
    )


def render_missing(*, csrf: str) -> str:
    return page(
        "No such job",
        el(
            "p",
            "There is no job with this id (it may have been pruned). ",
            el("a", "All jobs", href="/ui/jobs"),
        ),
        name="job",
        csrf=csrf,
    )
