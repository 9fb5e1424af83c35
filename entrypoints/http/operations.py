"""Resources for operating jobs and queues: a job's detail, cancel, retry, queues, runners.

Thin, as the rest: one core call each, its answer shaped by ``views`` (the
CLI prints the same shapes).
"""

from __future__ import annotations

from typing import Any

import falcon

from jobtable.core import Runner
from jobtable.core.enqueue_options import InvalidOptionError
from jobtable.core.jobs import CancelOutcome, JobDetail, RetryOutcome
from jobtable.core.limits import check_queue_limit
from jobtable.core.redaction import shown_payload
from jobtable.entrypoints import views
from jobtable.entrypoints.http.body import parse_json_object, read_body
from jobtable.entrypoints.http.errors import api_error

JOB_NOT_FOUND = ("not_found", "job not found")


class JobDetailResource:
    def __init__(self, runner: Runner, *, hide_payloads: bool = False) -> None:
        self._runner = runner
        self._hide_payloads = hide_payloads

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        found = self._runner.detail(job_id)
        if found is None:
            raise api_error(404, *JOB_NOT_FOUND)
        resp.media = views.job_detail(found, shown(self._runner, found, self._hide_payloads))


def shown(runner: Runner, detail: JobDetail, hide: bool) -> Any:
    """The detail's payload as this process may show it: redacted by its kind, or None when
    payloads are hidden or its kind is not registered here."""
    if hide:
        return None
    spec = runner.kinds.get(detail.job.kind)
    return shown_payload(detail.payload, None if spec is None else spec.redact)


class CancelResource:
    """200 when the job is cancelled now (or already was), 202 when its handler was asked to
    stop, 409 when it finished otherwise."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_post(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        cancelled = self._runner.cancel(job_id)
        if cancelled is None:
            raise api_error(404, *JOB_NOT_FOUND)
        outcome, job = cancelled
        if outcome is CancelOutcome.REFUSED:
            raise api_error(409, "conflict", views.cancel_refusal(job.status.value, job.error))
        if outcome is CancelOutcome.REQUESTED:
            resp.status = falcon.HTTP_202
        resp.media = job.to_public()


class RetryResource:
    """200 when a failed job is queued again (one more attempt allowed), 409 when it has not
    failed or another job holds its unique key now."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_post(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        retried = self._runner.retry(job_id)
        if retried is None:
            raise api_error(404, *JOB_NOT_FOUND)
        outcome, job = retried
        if outcome is RetryOutcome.REFUSED:
            raise api_error(409, "conflict", views.retry_refusal(job.status.value))
        if outcome is RetryOutcome.KEY_HELD:
            raise api_error(409, "conflict", views.KEY_HELD_REFUSAL)
        resp.media = job.to_public()


class QueuesResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"queues": [views.queue(state) for state in self._runner.queues()]}


class QueuePauseResource:
    """POST .../pause or .../resume: persisted for every process; answers the queue's state."""

    def __init__(self, runner: Runner, *, paused: bool) -> None:
        self._runner = runner
        self._paused = paused

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        set_paused(self._runner, name, paused=self._paused)
        state = views.queue_named(self._runner.queues(), name, paused=self._paused)
        resp.media = views.queue(state)


class QueueResource:
    """PATCH /api/v1/queues/{name}: ``{"limit": n | null, "rate": {"n": n, "per": seconds} |
    null}``; a key left out keeps its value, null removes it. Answers the queue's state."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_patch(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        body = parse_json_object(read_body(req), shape="a JSON object with limit and/or rate")
        unknown = sorted(set(body) - {"limit", "rate"})
        if unknown:
            raise api_error(400, "invalid_option", f"{unknown[0]}: not a queue setting")
        current = views.queue_named(self._runner.queues(held_back=[]), name, paused=False).limit
        running = body.get("limit", current.running)
        if "rate" not in body:
            rate_n, rate_per = (
                (None, None) if current.rate is None else (current.rate.n, current.rate.per)
            )
        elif body["rate"] is None:
            rate_n, rate_per = None, None
        elif isinstance(body["rate"], dict) and set(body["rate"]) == {"n", "per"}:
            rate_n, rate_per = body["rate"].get("n"), body["rate"].get("per")
        else:
            raise api_error(400, "invalid_option", 'rate: must be {"n": n, "per": seconds} or null')
        try:
            limit = check_queue_limit(running, rate_n, rate_per)
            self._runner.set_queue_limit(name, limit)
        except InvalidOptionError as error:
            raise api_error(400, "invalid_option", f"{error.field}: {error.problem}") from None
        state = views.queue_named(self._runner.queues(), name, paused=False)
        resp.media = views.queue(state)


def set_paused(runner: Runner, name: str, *, paused: bool) -> None:
    """Pause or resume ``name`` (the API's and the dashboard's buttons); 400 for a bad name."""
    try:
        if paused:
            runner.pause_queue(name)
        else:
            runner.resume_queue(name)
    except InvalidOptionError as error:
        raise api_error(400, "invalid_option", f"{error.field}: {error.problem}") from None


class SchedulesResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"schedules": [views.schedule(s) for s in self._runner.schedules()]}


class RunnersResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"runners": [views.runner(record) for record in self._runner.runners()]}
