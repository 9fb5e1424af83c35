"""Who may call what: the bearer token for the API, the dashboard's session cookie for /ui.

The two never stand in for each other: a resource says which it takes, a
bearer token opens no dashboard route and a session cookie no API route.
"""

from __future__ import annotations

import hmac
import re
from typing import Any, Protocol

import falcon

from jobtable.entrypoints.http.errors import api_error

API_PREFIX = "/api/v1"


_REPEATED_SLASHES = re.compile(r"/{2,}")


class SessionGate(Protocol):
    """The dashboard's side: which paths it owns, and admitting a request by its cookie."""

    prefix: str

    def is_public(self, path: str) -> bool:
        """The login page and static files: open to anyone."""

    def admit(self, req: falcon.Request) -> None:
        """Return when the request carries a valid session; raise the refusal otherwise."""


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


class BearerAuth:
    """Falcon middleware: ``Authorization: Bearer <token>``, compared in constant time.

    Deny by default: after routing, every resource needs the token unless it
    has ``auth_exempt = True`` (public) or ``auth_session = True`` (the
    dashboard's cookie instead, through the session gate), so no spelling of
    a path can slip past. Before routing, anything under /api/v1 needs the
    token and anything under the gate's prefix a session, so an
    unauthenticated caller cannot tell which routes exist.
    """

    def __init__(
        self,
        token: str,
        *,
        public_paths: frozenset[str] = frozenset(),
        sessions: SessionGate | None = None,
    ) -> None:
        if not token:
            raise ValueError("the API token must not be empty")
        self._expected = token.encode("utf-8")
        self._expected_header = b"Bearer " + self._expected
        self._public = public_paths
        self._sessions = sessions

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        path = req.path
        if "//" in path:
            path = _REPEATED_SLASHES.sub("/", path)
        if path in self._public:
            return
        if _under(path, API_PREFIX):
            self._require_token(req)
        elif (
            self._sessions is not None
            and _under(path, self._sessions.prefix)
            and not self._sessions.is_public(path)
        ):
            self._sessions.admit(req)

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: Any
    ) -> None:
        if resource is None or getattr(resource, "auth_exempt", False):
            return
        if getattr(resource, "auth_session", False):
            if self._sessions is None:
                raise api_error(401, "unauthenticated", "a valid session is required")
            self._sessions.admit(req)
            return
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
        if (  # as most clients send it: compared whole, in constant time, without parsing
            len(header) == len(self._expected_header)
            and header.isascii()
            and hmac.compare_digest(header.encode("ascii"), self._expected_header)
        ):
            return True
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        try:
            candidate = presented.strip().encode("utf-8")
        except UnicodeEncodeError:
            return False
        return hmac.compare_digest(candidate, self._expected)
