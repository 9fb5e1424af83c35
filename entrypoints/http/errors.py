"""Every error the API answers, in one envelope: ``{"error": {"code", "message"}}``.

Falcon's own errors (an unknown route, a wrong method, a bad header) go
through the same serializer, and anything unexpected becomes a 500 whose
log line names only the exception's type: its text may quote a secret. The
request's method and path are logged escaped: a newline in a path must not
write a line of its own.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import falcon

from jobtable.core import StoreError, StoreUnavailableError
from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.logs import escaped

_DEFAULTS: dict[int, tuple[str, str]] = {
    400: ("invalid_request", "the request is not valid"),
    401: ("unauthenticated", "a valid bearer token is required"),
    403: ("forbidden", "not allowed"),
    404: ("not_found", "not found"),
    405: ("method_not_allowed", "method not allowed"),
    406: ("not_acceptable", "only application/json is served"),
    408: ("request_timeout", "the request took too long"),
    411: ("length_required", "a Content-Length is required"),
    413: ("payload_too_large", "the request body exceeds 65536 bytes"),
    415: ("unsupported_media_type", "the body must be application/json"),
    431: ("invalid_request", "the request headers are too large"),
    500: ("internal", "internal error"),
    503: ("unavailable", "the database cannot be reached now; try again later"),
}


_CODE = re.compile(r"[a-z][a-z0-9_]*")


def api_error(status: int, code: str, message: str, **headers: str) -> falcon.HTTPError:
    """An error to raise from a resource, with the envelope's code and message."""
    return falcon.HTTPError(status, title=code, description=message, headers=headers or None)


def envelope_for_status(status: int) -> dict[str, Any]:
    """The envelope of an error that has nothing but its status to go by."""
    fallback = (
        ("internal", "internal error") if status >= 500 else ("invalid_request", "bad request")
    )
    code, message = _DEFAULTS.get(status, fallback)
    return {"error": {"code": code, "message": message}}


def envelope(status: int, exc: falcon.HTTPError) -> dict[str, Any]:
    """Our errors carry their code as the title; Falcon's own get the status's default."""
    if exc.title and _CODE.fullmatch(exc.title):
        return {"error": {"code": exc.title, "message": exc.description or ""}}
    return envelope_for_status(status)


def serialize_error(req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError) -> None:
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json_text.dumps(envelope(exc.status_code, exc))


def _request(req: falcon.Request) -> str:
    return f"method={escaped(req.method)} path={escaped(req.path)}"


def install_error_handlers(app: falcon.App, logger: logging.Logger) -> None:
    def unavailable(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
        category = ex.category if isinstance(ex, StoreError) else "database error"
        logger.warning("request failed: %s %s", category, _request(req))
        raise api_error(503, *_DEFAULTS[503], **{"Retry-After": "1"})

    def store_error(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
        category = ex.category if isinstance(ex, StoreError) else "database error"
        logger.error("request failed: %s %s", category, _request(req))
        raise api_error(500, *_DEFAULTS[500])

    def unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
        if isinstance(ex, falcon.HTTPError):
            raise ex
        logger.error("request failed: unexpected %s %s", type(ex).__name__, _request(req))
        raise api_error(500, *_DEFAULTS[500])

    # Falcon picks the most specific handler for an exception's type.
    app.add_error_handler(Exception, unexpected)
    app.add_error_handler(StoreError, store_error)
    app.add_error_handler(StoreUnavailableError, unavailable)
    app.set_error_serializer(serialize_error)
