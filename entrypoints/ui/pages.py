"""The dashboard's pages and the data its script reads: thin, one or two core calls each."""

from __future__ import annotations

import datetime

import falcon

from jobtable.core import Runner
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.ids import could_exist
from jobtable.core.jobs import JobPage as ListedPage
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.http.operations import shown
from jobtable.entrypoints.http.streams import (
    MEDIA_TYPE,
    JobEventStream,
    StreamSlots,
    resume_point,
)
from jobtable.entrypoints.ui.bulk_page import done_notice
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.history_panel import picked, read_history
from jobtable.entrypoints.ui.job_list import FILTER_FIELDS, PAGE_SIZE, Choices, Filters, render_jobs
from jobtable.entrypoints.ui.job_page import render_job, render_missing
from jobtable.entrypoints.ui.layout import see_other, send_page
from jobtable.entrypoints.ui.overview import OverviewReads, render_overview
from jobtable.entrypoints.ui.schedules_page import render_schedules
from jobtable.entrypoints.ui.shown import job_href


class _Page:
    auth_session = True

    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        self._runner = runner
        self._gate = gate

    def _csrf(self, req: falcon.Request) -> str:
        return self._gate.keys.csrf_token(req.context.session)


class DashboardRoot(_Page):
    """``/ui`` without its slash: the overview's address is ``/ui/``."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        see_other(resp, "/ui/")


class OverviewPage(_Page):
    def __init__(self, runner: Runner, gate: DashboardGate, reads: OverviewReads) -> None:
        super().__init__(runner, gate)
        self._reads = reads

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        history = read_history(self._runner, *picked(req))
        kinds = sorted({s.kind for s in history.kinds} | set(self._runner.kinds.names()))
        document = render_overview(
            self._reads.fresh(), csrf=self._csrf(req), history=history, kinds=kinds
        )
        send_page(resp, document)


class OverviewData(_Page):
    def __init__(self, runner: Runner, gate: DashboardGate, reads: OverviewReads) -> None:
        super().__init__(runner, gate)
        self._reads = reads

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._reads.shared().data()


class SchedulesPage(_Page):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        send_page(resp, render_schedules(self._runner.schedules(), csrf=self._csrf(req)))


class JobPage(_Page):
    def __init__(self, runner: Runner, gate: DashboardGate, *, hide_payloads: bool) -> None:
        super().__init__(runner, gate)
        self._hide_payloads = hide_payloads

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        # The job and its version come from one read: the page's stream starts at that
        # version, so no change after the page was drawn is missed.
        detail = self._runner.detail(job_id)
        if detail is None:
            send_page(resp, render_missing(csrf=self._csrf(req)), status=404)
            return
        payload = shown(self._runner, detail, self._hide_payloads)
        document = render_job(
            detail, csrf=self._csrf(req), notice=req.get_param("done"), payload=payload
        )
        send_page(resp, document)


class JobListPage(_Page):
    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        super().__init__(runner, gate)
        self._now = gate.now

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = Filters(**{name: req.get_param(name) or "" for name in FILTER_FIELDS})
        if could_exist(filters.id.strip().lower()) and len(filters.id.strip()) == 36:
            job_id = filters.id.strip().lower()
            if self._runner.get(job_id) is not None:
                see_other(resp, job_href(job_id))  # a whole id: its page
                return
        cursor = req.get_param("cursor") or None
        before = req.get_param("before") or None
        choices = self._choices()
        now = datetime.datetime.fromtimestamp(self._now(), tz=datetime.UTC)
        notice = done_notice(req.get_param("bulk"), req.get_param("changed"))
        try:
            found = self._runner.list_jobs(
                status=filters.status or None,
                state=filters.state or None,
                kind=filters.kind or None,
                queue=filters.queue or None,
                id_part=filters.id or None,
                limit=PAGE_SIZE,
                after=cursor,
                before=None if cursor else before,
            )
        except InvalidOptionError as error:
            document = render_jobs(
                ListedPage(jobs=(), next_after=None),
                filters=filters,
                choices=choices,
                now=now,
                problem=f"{error.field}: {error.problem}",
                notice=None,
                csrf=self._csrf(req),
            )
            send_page(resp, document, status=400)
            return
        document = render_jobs(
            found,
            filters=filters,
            choices=choices,
            now=now,
            problem=None,
            notice=notice,
            csrf=self._csrf(req),
        )
        send_page(resp, document)

    def _choices(self) -> Choices:
        """The kinds registered here or by any live runner, and the queues those kinds and
        runners name: small reads, whatever the jobs table holds (the fields take any name
        too)."""
        kinds = set(self._runner.kinds.names())
        queues = {spec.queue for spec in map(self._runner.kinds.get, kinds) if spec is not None}
        for record in self._runner.runners():
            kinds.update(record.info.kinds)
            queues.update(record.info.queues or ())
        return Choices(kinds=tuple(sorted(kinds)), queues=tuple(sorted(queues)))


class JobEvents(_Page):
    """The job page's live feed: the job's changes as Server-Sent Events (cookie only)."""

    def __init__(self, runner: Runner, gate: DashboardGate, slots: StreamSlots) -> None:
        super().__init__(runner, gate)
        self._slots = slots

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        try:
            after = resume_point(req.get_header("Last-Event-ID"), req.get_param("after"))
        except ValueError:
            raise api_error(
                400, "invalid_request", "Last-Event-ID and after must be a version number"
            ) from None
        if self._runner.events(job_id, after) is None:
            raise api_error(404, "not_found", "job not found")
        if not self._slots.take():
            raise api_error(
                503, "unavailable", "too many open event streams; try again shortly",
                **{"Retry-After": "2"},
            )  # fmt: skip
        resp.content_type = MEDIA_TYPE
        resp.stream = JobEventStream(self._runner, job_id, after, on_close=self._slots.release)
