"""Bearer-token authentication for everything under /api/v1 but its public paths."""

from __future__ import annotations

import hmac

import falcon

from entrypoints.http.errors import api_error

API_PREFIX = "/api/v1"


class BearerAuth:
    """Falcon middleware: a request under /api/v1 needs ``Authorization: Bearer <token>``.

    It runs before routing, so an unauthenticated caller learns nothing about
    which routes exist. The comparison takes constant time.
    """

    def __init__(self, token: str, *, public_paths: frozenset[str] = frozenset()) -> None:
        if not token:
            raise ValueError("the API token must not be empty")
        self._expected = token.encode("utf-8")
        self._public = public_paths

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        path = req.path
        if not (path == API_PREFIX or path.startswith(API_PREFIX + "/")) or path in self._public:
            return
        if not self._authorized(req.get_header("Authorization") or ""):
            raise api_error(
                401,
                "unauthenticated",
                "a valid bearer token is required",
                **{"WWW-Authenticate": "Bearer"},
            )

    def _authorized(self, header: str) -> bool:
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        try:
            candidate = presented.strip().encode("utf-8")
        except UnicodeEncodeError:
            return False
        return hmac.compare_digest(candidate, self._expected)
