"""The dashboard's session cookie and its CSRF token: signed, stateless, the same in every process.

The key is derived from the API token (HMAC-SHA256 of a fixed label), so
every process that shares the token accepts a cookie any of them issued, and
no server keeps sessions. The cookie holds a version, its expiry (Unix
seconds) and a random session id, signed together; the CSRF token is an HMAC
of the session id under the same key, so a page's forms carry a value no
other site can read or make. Changing the API token ends every session.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

import attrs

COOKIE_NAME = "jobtable_session"
COOKIE_PATH = "/ui"
LIFETIME = 12 * 3600
"""Seconds a session lasts from login: a working day, then the token is asked for again."""

_VERSION = "1"
_KEY_LABEL = b"jobtable-ui-session"
_CSRF_LABEL = b"csrf:"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@attrs.frozen(kw_only=True)
class Session:
    id: str
    expires: int
    """Unix seconds after which the cookie is refused."""


class SessionKeys:
    """Issues and checks session cookies and CSRF tokens under a key derived from the API token."""

    def __init__(self, api_token: str) -> None:
        if not api_token:
            raise ValueError("the API token must not be empty")
        self._key = hmac.new(api_token.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()

    def _sign(self, text: str) -> str:
        return _b64(hmac.new(self._key, text.encode("ascii"), hashlib.sha256).digest())

    def issue(self, *, now: float) -> tuple[Session, str]:
        """A new session from ``now`` (Unix seconds) and the cookie value that carries it."""
        session = Session(id=_b64(secrets.token_bytes(16)), expires=int(now) + LIFETIME)
        signed = f"{_VERSION}.{session.expires}.{session.id}"
        return session, f"{signed}.{self._sign(signed)}"

    def verify(self, cookie: str | None, *, now: float) -> Session | None:
        """The session a cookie carries, or None: absent, malformed, tampered with or expired."""
        if not cookie or not cookie.isascii():
            return None
        parts = cookie.split(".")
        if len(parts) != 4 or parts[0] != _VERSION or not parts[1].isdigit():
            return None
        signed = ".".join(parts[:3])
        if not hmac.compare_digest(parts[3], self._sign(signed)):
            return None
        expires = int(parts[1])
        if expires <= now or expires > now + LIFETIME + 60:
            return None
        return Session(id=parts[2], expires=expires)

    def csrf_token(self, session: Session) -> str:
        """The token every action of this session must carry."""
        return self._sign(_CSRF_LABEL.decode("ascii") + session.id)

    def csrf_matches(self, session: Session, presented: str | None) -> bool:
        """Whether ``presented`` is this session's CSRF token (compared in constant time)."""
        if not presented or not presented.isascii():
            return False
        return hmac.compare_digest(presented, self.csrf_token(session))

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the API token itself (a login), in constant time."""
        candidate = hmac.new(presented.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()
        return hmac.compare_digest(candidate, self._key)
