"""The dashboard's door: its session cookie admits a request; a CSRF token and the request's
own origin admit an action.

A browser that is not logged in is sent to the login page (any request that
accepts text/html); a script or the page's own fetches and event stream get
401 in the API's envelope. Only the cookie counts here: a bearer token opens
nothing under /ui.
"""

from __future__ import annotations

import urllib.parse

import falcon

from jobtable.core.clock import Clock
from jobtable.entrypoints.http.body import media_type, read_bounded
from jobtable.entrypoints.http.errors import api_error
from jobtable.entrypoints.ui.session import COOKIE_NAME, Session, SessionKeys

PREFIX = "/ui"
LOGIN_PATH = "/ui/login"
STATIC_PREFIX = "/ui/static/"
FORM_LIMIT = 4096
"""Bytes a dashboard form may send: a token or a CSRF field, never more."""
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
FORM_TYPE = "application/x-www-form-urlencoded"


def wants_page(req: falcon.Request) -> bool:
    """A browser navigating (it accepts HTML), as opposed to a fetch or an event stream."""
    return "text/html" in (req.get_header("Accept") or "")


def login_location(next_path: str | None = None) -> str:
    if not next_path or not safe_next(next_path):
        return LOGIN_PATH
    return f"{LOGIN_PATH}?{urllib.parse.urlencode({'next': next_path})}"


def safe_next(path: str) -> bool:
    """A place under the dashboard to return to after login; never another site."""
    return (
        path.startswith(PREFIX + "/")
        and not path.startswith(LOGIN_PATH)
        and "\\" not in path
        and all(32 < ord(char) < 127 for char in path)
    )


class DashboardGate:
    """Admits requests by the session cookie; ``BearerAuth`` calls it for the dashboard's routes."""

    prefix = PREFIX

    def __init__(self, keys: SessionKeys, clock: Clock) -> None:
        self.keys = keys
        self._clock = clock

    def now(self) -> float:
        return self._clock.now().timestamp()

    def is_public(self, path: str) -> bool:
        return path == LOGIN_PATH or path.startswith(STATIC_PREFIX)

    def session(self, req: falcon.Request) -> Session | None:
        """The valid session among the request's cookies of our name, if any."""
        now = self.now()
        for value in req.get_cookie_values(COOKIE_NAME) or ():
            session = self.keys.verify(value, now=now)
            if session is not None:
                return session
        return None

    def admit(self, req: falcon.Request) -> None:
        if req.context.get("session") is not None:
            return
        session = self.session(req)
        if session is None:
            if wants_page(req):
                here = req.relative_uri if req.method in ("GET", "HEAD") else None
                raise falcon.HTTPSeeOther(login_location(here))
            raise api_error(
                401,
                "unauthenticated",
                "a valid dashboard session is required; log in at /ui/login",
                **{"WWW-Authenticate": 'Cookie realm="jobtable dashboard"'},
            )
        req.context.session = session

    def check_action(self, req: falcon.Request) -> None:
        """An action (a POST) of the logged-in session: same origin and its CSRF token, or 403.

        Nothing is changed before this passes. The token comes from the form's
        ``csrf`` field or the ``X-CSRF-Token`` header.
        """
        self.admit(req)
        check_same_origin(req)
        presented = req.get_header(CSRF_HEADER) or read_form(req).get(CSRF_FIELD)
        if not self.keys.csrf_matches(req.context.session, presented):
            raise api_error(
                403, "forbidden", "the form's CSRF token is missing or wrong; reload the page"
            )


def check_same_origin(req: falcon.Request) -> None:
    """Refuse a request a browser says came from another site.

    ``Sec-Fetch-Site`` when the browser sends it (every current one does);
    else the ``Origin`` host against ``Host`` (not the scheme: a TLS proxy in
    front changes it). A client that sends neither is not a browser another
    site can drive, and the CSRF token still has to match.
    """
    site = req.get_header("Sec-Fetch-Site")
    if site is not None:
        same = site == "same-origin"
    else:
        origin = req.get_header("Origin")
        if origin is None:
            return
        host = urllib.parse.urlsplit(origin).netloc.lower() if origin != "null" else ""
        same = bool(host) and host == (req.get_header("Host") or "").lower()
    if not same:
        raise api_error(403, "forbidden", "a request from another site is refused")


def read_form(req: falcon.Request) -> dict[str, str]:
    """A small url-encoded form, read once per request (the first value of each field)."""
    cached = req.context.get("form")
    if cached is not None:
        return dict(cached)
    form: dict[str, str] = {}
    if media_type(req) == FORM_TYPE:
        body = read_bounded(req, limit=FORM_LIMIT)
        try:
            fields = urllib.parse.parse_qsl(
                body.decode("utf-8"), keep_blank_values=True, max_num_fields=8
            )
        except (UnicodeDecodeError, ValueError):
            raise api_error(400, "invalid_request", "the form is not valid") from None
        for name, value in fields:
            form.setdefault(name, value)
    req.context.form = form
    return dict(form)
