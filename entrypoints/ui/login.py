"""Logging in and out: the API token, pasted once, exchanged for a signed session cookie."""

from __future__ import annotations

import falcon

from jobtable.entrypoints.ui.guard import (
    LOGIN_PATH,
    DashboardGate,
    check_same_origin,
    read_form,
    safe_next,
)
from jobtable.entrypoints.ui.layout import page, see_other, send_page
from jobtable.entrypoints.ui.markup import el
from jobtable.entrypoints.ui.session import COOKIE_NAME, COOKIE_PATH, LIFETIME


def render_login(*, next_path: str, refused: bool) -> str:
    form = el(
        "form",
        el("label", "API token", for_="token"),
        el(
            "input",
            type="password",
            id="token",
            name="token",
            autocomplete="current-password",
            required=True,
            autofocus=True,
        ),
        el("input", type="hidden", name="next", value=next_path),
        el("button", "Log in", type="submit"),
        method="post",
        action=LOGIN_PATH,
        class_="login",
    )
    hint = el(
        "p",
        "The token the API takes as its bearer token (",
        el("code", "JOBTABLE_API_TOKEN"),
        ", or the file ",
        el("code", "<database>.token"),
        "). The session lasts 12 hours.",
        class_="hint",
    )
    warning = refused and el("p", "That is not the API token.", class_="error", role="alert")
    return page("Log in", el("div", warning, form, hint, class_="panel"), name="login", csrf=None)


def _secure(req: falcon.Request) -> bool:
    """Mark the cookie Secure when the browser reached us over HTTPS: the request's own scheme,
    or the Origin it sent (a TLS-terminating proxy in front makes the request plain HTTP)."""
    origin = req.get_header("Origin") or ""
    return req.scheme == "https" or origin.startswith("https://")


class LoginResource:
    auth_exempt = True

    def __init__(self, gate: DashboardGate) -> None:
        self._gate = gate

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        next_path = req.get_param("next") or ""
        send_page(
            resp, render_login(next_path=next_path if safe_next(next_path) else "", refused=False)
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        check_same_origin(req)
        form = read_form(req)
        next_path = form.get("next", "")
        next_path = next_path if safe_next(next_path) else ""
        try:
            accepted = self._gate.keys.token_matches(form.get("token", "").strip())
        except UnicodeEncodeError:
            accepted = False
        if not accepted:
            send_page(resp, render_login(next_path=next_path, refused=True), status=401)
            return
        _, cookie = self._gate.keys.issue(now=self._gate.now())
        resp.set_cookie(
            COOKIE_NAME,
            cookie,
            max_age=LIFETIME,
            path=COOKIE_PATH,
            secure=_secure(req),
            http_only=True,
            same_site="Strict",
        )
        see_other(resp, next_path or "/ui/")


class LogoutResource:
    auth_session = True

    def __init__(self, gate: DashboardGate) -> None:
        self._gate = gate

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._gate.check_action(req)
        resp.unset_cookie(COOKIE_NAME, path=COOKIE_PATH, same_site="Strict")
        see_other(resp, LOGIN_PATH)
