"""The Falcon app factory: every adapter comes in as an argument; nothing is built at import."""

from __future__ import annotations

import importlib.metadata
import logging

import falcon

from core import Runner
from entrypoints.http.auth import BearerAuth
from entrypoints.http.errors import install_error_handlers
from entrypoints.http.openapi import openapi_document
from entrypoints.http.resources import HealthResource, JobResource, JobsResource, OpenApiResource

OPENAPI_PATH = "/api/v1/openapi.json"


def package_version() -> str:
    try:
        return importlib.metadata.version("jobtable")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


def create_app(
    runner: Runner,
    *,
    api_token: str,
    version: str | None = None,
    logger: logging.Logger | None = None,
) -> falcon.App:
    """The HTTP API over ``runner``. ``api_token`` guards everything under /api/v1."""
    if runner is None:
        raise ValueError("create_app needs a runner")
    log = logger or logging.getLogger("jobtable.http")
    app = falcon.App(
        media_type=falcon.MEDIA_JSON,
        middleware=[BearerAuth(api_token, public_paths=frozenset({OPENAPI_PATH}))],
    )
    install_error_handlers(app, log)
    version = version or package_version()
    app.add_route("/health", HealthResource(version))
    app.add_route(OPENAPI_PATH, OpenApiResource(openapi_document(version)))
    app.add_route("/api/v1/jobs", JobsResource(runner))
    app.add_route("/api/v1/jobs/{job_id}", JobResource(runner))
    return app
