"""The dashboard's buttons: cancel, retry, pause, resume. POST only, each checked by the gate
(session, same origin, CSRF token) before anything changes, then back to the page (303)."""

from __future__ import annotations

import falcon

from jobtable.core import Runner
from jobtable.core.jobs import CancelOutcome, RetryOutcome
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.http.operations import set_paused
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.layout import see_other
from jobtable.entrypoints.ui.shown import job_href

_CANCEL_NOTICE = {
    CancelOutcome.CANCELLED: "cancelled",
    CancelOutcome.REQUESTED: "stopping",
    CancelOutcome.REFUSED: "cancel-refused",
}

_RETRY_NOTICE = {
    RetryOutcome.RETRIED: "retried",
    RetryOutcome.REFUSED: "retry-refused",
    RetryOutcome.KEY_HELD: "retry-key-held",
}


class _Action:
    auth_session = True

    def __init__(self, runner: Runner, gate: DashboardGate) -> None:
        self._runner = runner
        self._gate = gate


class _JobAction(_Action):
    """A button on a job's page: done, then back to the page saying what happened."""

    def on_post(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        self._gate.check_action(req)
        notice = self._act(job_id)
        if notice is None:
            raise api_error(404, "not_found", "job not found")
        see_other(resp, f"{job_href(job_id)}?done={notice}")

    def _act(self, job_id: str) -> str | None:
        """The notice naming what happened; None when there is no such job."""
        raise NotImplementedError


class CancelAction(_JobAction):
    def _act(self, job_id: str) -> str | None:
        cancelled = self._runner.cancel(job_id)
        return None if cancelled is None else _CANCEL_NOTICE[cancelled[0]]


class RetryAction(_JobAction):
    def _act(self, job_id: str) -> str | None:
        retried = self._runner.retry(job_id)
        return None if retried is None else _RETRY_NOTICE[retried[0]]


class QueueAction(_Action):
    def __init__(self, runner: Runner, gate: DashboardGate, *, paused: bool) -> None:
        super().__init__(runner, gate)
        self._paused = paused

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        self._gate.check_action(req)
        set_paused(self._runner, name, paused=self._paused)
        see_other(resp, "/ui/#queues")
