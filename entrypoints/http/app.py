"""The Falcon app factory: every adapter comes in as an argument; nothing is built at import."""

from __future__ import annotations

import logging
import secrets

import falcon

from jobtable.adapters.system_clock import SystemClock
from jobtable.core import Runner
from jobtable.core.bulk import BulkAction
from jobtable.core.clock import Clock
from jobtable.core.tracing import NO_TRACING, Tracing
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.auth import BearerAuth
from jobtable.entrypoints.http.bulk import BulkResource
from jobtable.entrypoints.http.errors import install_error_handlers
from jobtable.entrypoints.http.live import JobEventsResource, JobResource
from jobtable.entrypoints.http.openapi import openapi_document
from jobtable.entrypoints.http.operations import (
    CancelResource,
    JobDetailResource,
    QueuePauseResource,
    QueueResource,
    QueuesResource,
    RetryResource,
    RunnersResource,
    SchedulesResource,
)
from jobtable.entrypoints.http.resources import (
    BatchResource,
    HealthResource,
    JobsResource,
    MetricsResource,
    OpenApiResource,
)
from jobtable.entrypoints.http.streams import StreamSlots
from jobtable.entrypoints.http.tracing import IncomingTraceContext
from jobtable.entrypoints.metrics import metrics_registry
from jobtable.entrypoints.ui.guard import DashboardGate
from jobtable.entrypoints.ui.headers import DashboardHeaders
from jobtable.entrypoints.ui.routes import add_dashboard
from jobtable.entrypoints.ui.session import SessionKeys

OPENAPI_PATH = "/api/v1/openapi.json"
METRICS_PATH = "/metrics"


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
    metrics_public: bool = False,
    clock: Clock | None = None,
    streams: StreamSlots | None = None,
    hide_payloads: bool = False,
) -> falcon.App:
    """The HTTP API over ``runner``, and the dashboard at /ui/. ``api_token`` guards
    everything under /api/v1 as a bearer token, and /metrics unless ``metrics_public``.

    /metrics serves the store's state, and the runner's events when its
    observer is a ``jobtable.entrypoints.metrics.JobMetrics``. The dashboard's
    login page takes the same token and gives a session cookie signed with a
    key derived from it; ``clock`` times the sessions. ``streams`` bounds the
    event streams and long-polls waiting at once, the API's and the
    dashboard's together (each holds a server thread: ``HttpServer`` gives
    them ``stream_slots`` threads of their own). ``hide_payloads``: the detail and the job
    page show no payload (a kind's ``redact`` fields are hidden either way).
    """
    if runner is None:
        raise ValueError("create_app needs a runner")
    gate = DashboardGate(SessionKeys(api_token), clock or SystemClock())
    app = _bare_app(
        api_token,
        logger,
        public_paths=frozenset({OPENAPI_PATH}),
        sessions=gate,
        tracing=runner.client.tracing,
    )
    version = version or package_version()
    app.add_route("/health", HealthResource(version))
    app.add_route(METRICS_PATH, MetricsResource(metrics_registry(runner), public=metrics_public))
    app.add_route(OPENAPI_PATH, OpenApiResource(openapi_document(version)))
    app.add_route("/api/v1/jobs", JobsResource(runner))
    app.add_route("/api/v1/jobs/batch", BatchResource(runner))
    app.add_route("/api/v1/jobs/cancel", BulkResource(runner, BulkAction.CANCEL))
    app.add_route("/api/v1/jobs/retry", BulkResource(runner, BulkAction.RETRY))
    slots = streams or StreamSlots()
    app.add_route("/api/v1/jobs/{job_id}", JobResource(runner, slots))
    app.add_route("/api/v1/jobs/{job_id}/events", JobEventsResource(runner, slots))
    app.add_route(
        "/api/v1/jobs/{job_id}/detail", JobDetailResource(runner, hide_payloads=hide_payloads)
    )
    app.add_route("/api/v1/jobs/{job_id}/cancel", CancelResource(runner))
    app.add_route("/api/v1/jobs/{job_id}/retry", RetryResource(runner))
    app.add_route("/api/v1/queues", QueuesResource(runner))
    app.add_route("/api/v1/queues/{name}", QueueResource(runner))
    app.add_route("/api/v1/queues/{name}/pause", QueuePauseResource(runner, paused=True))
    app.add_route("/api/v1/queues/{name}/resume", QueuePauseResource(runner, paused=False))
    app.add_route("/api/v1/runners", RunnersResource(runner))
    app.add_route("/api/v1/schedules", SchedulesResource(runner))
    add_dashboard(app, runner, gate, streams=slots, hide_payloads=hide_payloads)
    return app


def create_metrics_app(
    runner: Runner,
    *,
    api_token: str | None,
    public: bool = False,
    logger: logging.Logger | None = None,
) -> falcon.App:
    """Only /metrics, as ``create_app`` serves it: for ``jobtable worker --metrics-listen``.

    ``api_token`` guards it unless ``public`` (then it may be None).
    """
    if not public and not api_token:
        raise ValueError("a metrics app that is not public needs an API token")
    # Public: the token guards nothing, so it is one nobody knows.
    app = _bare_app(api_token or secrets.token_urlsafe(32), logger)
    app.add_route(METRICS_PATH, MetricsResource(metrics_registry(runner), public=public))
    return app


def _bare_app(
    api_token: str,
    logger: logging.Logger | None,
    *,
    public_paths: frozenset[str] = frozenset(),
    sessions: DashboardGate | None = None,
    tracing: Tracing = NO_TRACING,
) -> falcon.App:
    """A Falcon app with our authentication, headers, JSON and error envelope; no routes.

    ``sessions``: the dashboard's gate, for an app that serves /ui. With ``tracing`` on, a
    request's ``traceparent`` is the parent of the spans of what it enqueues.
    """
    middleware: list[object] = [
        BearerAuth(api_token, public_paths=public_paths, sessions=sessions),
        DataOnlyHeaders(),
    ]
    if sessions is not None:
        middleware.append(DashboardHeaders())
    if tracing.enabled:
        middleware.insert(0, IncomingTraceContext(tracing))
    app = falcon.App(media_type=falcon.MEDIA_JSON, middleware=middleware)
    json_handler = falcon.media.JSONHandler(dumps=json_text.dumps)
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    install_error_handlers(app, logger or logging.getLogger("jobtable.http"))
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
