"""The HTTP resources: thin, one core call each."""

from __future__ import annotations

import falcon

from jobtable.core import InvalidPayloadError, Runner, UnknownKindError
from jobtable.entrypoints.http.body import parse_job_request, read_body
from jobtable.entrypoints.http.errors import api_error


class HealthResource:
    auth_exempt = True

    def __init__(self, version: str) -> None:
        self._body = {"status": "ok", "version": version}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._body


class OpenApiResource:
    auth_exempt = True

    def __init__(self, document: dict[str, object]) -> None:
        self._document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._document


class JobResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: str) -> None:
        job = self._runner.get(job_id)
        if job is None:
            raise api_error(404, "not_found", "job not found")
        resp.media = job.to_public()


class JobsResource:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        kind, payload = parse_job_request(read_body(req))
        try:
            job_id = self._runner.enqueue(kind, payload)
        except UnknownKindError:
            raise api_error(400, "unknown_kind", "unknown job kind") from None
        except InvalidPayloadError as error:
            detail = "; ".join(error.problems[:20])
            raise api_error(
                400, "invalid_payload", f"payload does not match the job kind: {detail}"
            ) from None
        resp.status = falcon.HTTP_202
        resp.location = f"/api/v1/jobs/{job_id}"
        resp.media = {"id": job_id}
