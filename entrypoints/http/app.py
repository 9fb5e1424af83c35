"""The Falcon app factory: every adapter comes in as an argument; nothing is built at import."""

from __future__ import annotations

import logging

import falcon

from jobtable.core import Runner
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.auth import BearerAuth
from jobtable.entrypoints.http.errors import install_error_handlers
from jobtable.entrypoints.http.live import JobEventsResource, JobResource
from jobtable.entrypoints.http.openapi import openapi_document
from jobtable.entrypoints.http.operations import (
    CancelResource,
    JobDetailResource,
    QueuePauseResource,
    QueuesResource,
    RetryResource,
    RunnersResource,
)
from jobtable.entrypoints.http.resources import (
    BatchResource,
    HealthResource,
    JobsResource,
    OpenApiResource,
)
from jobtable.entrypoints.http.streams import DEFAULT_STREAM_SLOTS, StreamSlots

OPENAPI_PATH = "/api/v1/openapi.json"


def package_version() -> str:
    """The installed distribution's version (one source: ``jobtable.__version__``)."""
    import jobtable

    return str(jobtable.__version__)


def create_app(
    runner: Runner,
    *,
    api_token: str,
    version: str | None = None,
    logger: logging.Logger | None = None,
    stream_slots: int = DEFAULT_STREAM_SLOTS,
) -> falcon.App:
    """The HTTP API over ``runner``. ``api_token`` guards everything under /api/v1.

    ``stream_slots`` event streams and long-polls may wait at once; serve the app
    with that many threads more than ordinary requests get (``HttpServer`` does).
    """
    if runner is None:
        raise ValueError("create_app needs a runner")
    log = logger or logging.getLogger("jobtable.http")
    app = falcon.App(
        media_type=falcon.MEDIA_JSON,
        middleware=[
            BearerAuth(api_token, public_paths=frozenset({OPENAPI_PATH})),
            DataOnlyHeaders(),
        ],
    )
    json_handler = falcon.media.JSONHandler(dumps=json_text.dumps)
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    install_error_handlers(app, log)
    version = version or package_version()
    app.add_route("/health", HealthResource(version))
    app.add_route(OPENAPI_PATH, OpenApiResource(openapi_document(version)))
    app.add_route("/api/v1/jobs", JobsResource(runner))
    app.add_route("/api/v1/jobs/batch", BatchResource(runner))
    slots = StreamSlots(stream_slots)
    app.add_route("/api/v1/jobs/{job_id}", JobResource(runner, slots))
    app.add_route("/api/v1/jobs/{job_id}/events", JobEventsResource(runner, slots, logger=log))
    app.add_route("/api/v1/jobs/{job_id}/detail", JobDetailResource(runner))
    app.add_route("/api/v1/jobs/{job_id}/cancel", CancelResource(runner))
    app.add_route("/api/v1/jobs/{job_id}/retry", RetryResource(runner))
    app.add_route("/api/v1/queues", QueuesResource(runner))
    app.add_route("/api/v1/queues/{name}/pause", QueuePauseResource(runner, paused=True))
    app.add_route("/api/v1/queues/{name}/resume", QueuePauseResource(runner, paused=False))
    app.add_route("/api/v1/runners", RunnersResource(runner))
    return app


class DataOnlyHeaders:
    """Falcon middleware: every answer is data to be parsed, never a page to render or cache.

    ``nosniff`` stops a browser guessing HTML from a body that holds markup;
    ``no-store`` keeps a job's changing state (and anything behind the token)
    out of shared caches.
    """

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Cache-Control", "no-store")
