"""The Falcon app factory: every adapter comes in as an argument; nothing is built at import."""

from __future__ import annotations

import logging

import falcon

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.core.clock import Clock
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.auth import BearerAuth
from jobtable.entrypoints.http.errors import install_error_handlers
from jobtable.entrypoints.http.openapi import openapi_document
from jobtable.entrypoints.http.operations import (
    CancelResource,
    JobDetailResource,
    QueuePauseResource,
    QueuesResource,
    RunnersResource,
)
from jobtable.entrypoints.http.resources import (
    BatchResource,
    HealthResource,
    JobResource,
    JobsResource,
    OpenApiResource,
)
from jobtable.entrypoints.http.streams import StreamSlots
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.headers import DashboardHeaders
from jobtable.entrypoints.ui.routes import add_dashboard
from jobtable.entrypoints.ui.session import SessionKeys

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
    clock: Clock | None = None,
    streams: StreamSlots | None = None,
) -> falcon.App:
    """The HTTP API over ``runner``, and the dashboard at /ui/.

    ``api_token`` guards everything under /api/v1 as a bearer token, and is
    what the dashboard's login page takes (its session cookie is signed with
    a key derived from it). ``clock`` times the dashboard's sessions;
    ``streams`` bounds the event streams open at once (each holds a server
    thread: give the server that many threads more than for requests).
    """
    if runner is None:
        raise ValueError("create_app needs a runner")
    log = logger or logging.getLogger("jobtable.http")
    gate = DashboardGate(SessionKeys(api_token), clock or SystemClock())
    app = falcon.App(
        media_type=falcon.MEDIA_JSON,
        middleware=[
            BearerAuth(api_token, public_paths=frozenset({OPENAPI_PATH}), sessions=gate),
            DataOnlyHeaders(),
            DashboardHeaders(),
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
    app.add_route("/api/v1/jobs/{job_id}", JobResource(runner))
    app.add_route("/api/v1/jobs/{job_id}/detail", JobDetailResource(runner))
    app.add_route("/api/v1/jobs/{job_id}/cancel", CancelResource(runner))
    app.add_route("/api/v1/queues", QueuesResource(runner))
    app.add_route("/api/v1/queues/{name}/pause", QueuePauseResource(runner, paused=True))
    app.add_route("/api/v1/queues/{name}/resume", QueuePauseResource(runner, paused=False))
    app.add_route("/api/v1/runners", RunnersResource(runner))
    add_dashboard(app, runner, gate, streams=streams or StreamSlots())
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
