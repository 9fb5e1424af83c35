"""The HTTP resources: thin, one core call each."""

from __future__ import annotations

import falcon

from core import Runner
from entrypoints.http.errors import api_error


class HealthResource:
    auth_exempt = True

    def __init__(self, version: str) -> None:
        self._body = {"status": "ok", "version": version}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._body


class JobResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        job = self._runner.get(job_id)
        if job is None:
            raise api_error(404, "not_found", "job not found")
        resp.media = job.to_public()
