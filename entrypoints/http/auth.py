"""Bearer-token authentication: every resource needs the token unless it says it is public."""

from __future__ import annotations

import hmac
import re
from typing import Any

import falcon

from jobtable.entrypoints.http.errors import api_error

API_PREFIX = "/api/v1"


_REPEATED_SLASHES = re.compile(r"/{2,}")


class BearerAuth:
    """Falcon middleware: ``Authorization: Bearer <token>``, compared in constant time.

    Deny by default: after routing, every resource needs the token unless it
    has ``auth_exempt = True``, so no spelling of a path can slip past. Before
    routing, anything under /api/v1 needs it too, so an unauthenticated
    caller cannot tell which API routes exist.
    """

    def __init__(self, token: str, *, public_paths: frozenset[str] = frozenset()) -> None:
        if not token:
            raise ValueError("the API token must not be empty")
        self._expected = token.encode("utf-8")
        self._public = public_paths

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        path = _REPEATED_SLASHES.sub("/", req.path)
        if path in self._public:
            return
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            self._require_token(req)

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: Any
    ) -> None:
        if resource is not None and not getattr(resource, "auth_exempt", False):
            self._require_token(req)

    def _require_token(self, req: falcon.Request) -> None:
        if req.context.get("authenticated"):
            return
        if not self._authorized(req.get_header("Authorization") or ""):
            raise api_error(
                401,
                "unauthenticated",
                "a valid bearer token is required",
                **{"WWW-Authenticate": "Bearer"},
            )
        req.context.authenticated = True

    def _authorized(self, header: str) -> bool:
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        try:
            candidate = presented.strip().encode("utf-8")
        except UnicodeEncodeError:
            return False
        return hmac.compare_digest(candidate, self._expected)
