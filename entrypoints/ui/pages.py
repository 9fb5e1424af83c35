"""The dashboard's pages and the data its script reads: thin, one or two core calls each."""

from __future__ import annotations

import falcon

from jobtable.core import Runner
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.job_page import render_job, render_missing
from jobtable.entrypoints.ui.layout import see_other, send_page
from jobtable.entrypoints.ui.overview import overview_data, render_overview


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
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        document = render_overview(
            self._runner.queues(),
            self._runner.runners(),
            csrf=self._csrf(req),
            at=self._gate.now(),
        )
        send_page(resp, document)


class OverviewData(_Page):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = overview_data(
            self._runner.queues(), self._runner.runners(), at=self._gate.now()
        )


class JobPage(_Page):
    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        found = self._runner.detail(job_id)
        if found is None:
            send_page(resp, render_missing(csrf=self._csrf(req)), status=404)
            return
        detail, waiting = found
        document = render_job(
            detail,
            waiting,
            csrf=self._csrf(req),
            version=getattr(detail.job, "version", 0),
            notice=req.get_param("done"),
        )
        send_page(resp, document)
