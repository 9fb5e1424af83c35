"""Bulk actions from the job list: GET /ui/jobs/bulk counts the jobs a filter matches (a dry
run) and asks to confirm; POST does it to exactly those (the jobs up to the newest one the
count saw), then goes back to the list saying how many changed."""

from __future__ import annotations

import falcon

from jobtable.core import Runner
from jobtable.core.bulk import BulkAction, BulkFilter, BulkResult, bulk_filter
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.times import parse_rfc3339
from jobtable.entrypoints.ui.guard import CSRF_FIELD, DashboardGate, read_form
from jobtable.entrypoints.ui.job_list import Filters
from jobtable.entrypoints.ui.layout import page, see_other, send_page
from jobtable.entrypoints.ui.markup import Markup, el, fragment

FIELDS = ("state", "kind", "queue")
"""The list's filters a bulk action takes (the API's creation window is the CLI's and HTTP's)."""
DONE = {BulkAction.CANCEL: "cancelled or told to stop", BulkAction.RETRY: "queued again"}


def _read(fields: dict[str, str]) -> tuple[BulkAction, BulkFilter, Filters]:
    """The action and its filter from a request's fields; 400 for anything else."""
    try:
        action = BulkAction(fields.get("action", ""))
    except ValueError:
        raise api_error(400, "invalid_option", "action: must be cancel or retry") from None
    given = {name: fields[name] for name in FIELDS if fields.get(name)}
    try:
        which = bulk_filter(given, parse_rfc3339)
    except InvalidOptionError as error:
        raise api_error(400, "invalid_option", str(error)) from None
    filters = Filters(**given)
    if action not in filters.bulk_actions():
        raise api_error(
            400, "invalid_option", "filter: name a state, kind or queue this applies to"
        )
    return action, which, filters


def done_notice(action: str | None, changed: str | None) -> str | None:
    """The list's line after a bulk action (from its redirect's query)."""
    if action not in {a.value for a in BulkAction} or not (changed or "").isdigit():
        return None
    return f"{int(changed or 0)} jobs {DONE[BulkAction(action)]}."


def _described(filters: Filters) -> Markup:
    return el(
        "dl",
        [
            fragment(el("dt", name), el("dd", getattr(filters, name)))
            for name in FIELDS
            if getattr(filters, name)
        ],
        class_="bulk-filter",
    )


def render_confirm(action: BulkAction, filters: Filters, counted: BulkResult, *, csrf: str) -> str:
    verb = action.value.capitalize()
    back = el("a", "Back to the list", href=f"/ui/jobs?{filters.query()}")
    if not counted.matched or counted.through is None:
        content = fragment(
            _described(filters), el("p", f"No job matches: nothing to {action.value}."), back
        )
        return page(f"{verb} jobs", content, name="jobs", csrf=csrf)
    hidden = {"action": action.value, "through": counted.through, CSRF_FIELD: csrf}
    hidden |= {name: getattr(filters, name) for name in FIELDS if getattr(filters, name)}
    form = el(
        "form",
        [el("input", type="hidden", name=name, value=value) for name, value in hidden.items()],
        el(
            "button",
            f"{verb} {counted.matched} jobs",
            type="submit",
            class_="danger" if action is BulkAction.CANCEL else None,
        ),
        back,
        method="post",
        action="/ui/jobs/bulk",
        class_="confirm",
    )
    content = fragment(
        _described(filters),
        el(
            "p",
            el("strong", f"{counted.matched} jobs"),
            f" match. {verb} them? Jobs that arrive after this page was drawn are left alone.",
            class_="confirm-count",
            data_matched=str(counted.matched),
        ),
        form,
    )
    return page(f"{verb} {counted.matched} jobs?", content, name="jobs", csrf=csrf)


class BulkPage:
    auth_session = True

    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        self._runner = runner
        self._gate = gate

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        fields = {name: req.get_param(name) or "" for name in ("action", *FIELDS)}
        action, which, filters = _read(fields)
        counted = self._runner.bulk(action, which, dry_run=True, by="dashboard")
        csrf = self._gate.keys.csrf_token(req.context.session)
        send_page(resp, render_confirm(action, filters, counted, csrf=csrf))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._gate.check_action(req)
        fields = read_form(req)
        action, which, filters = _read(fields)
        try:
            done = self._runner.bulk(
                action, which, by="dashboard", through=fields.get("through") or None
            )
        except InvalidOptionError as error:
            raise api_error(400, "invalid_option", str(error)) from None
        query = filters.query(bulk=action.value, changed=str(done.changed))
        see_other(resp, f"/ui/jobs?{query}")
