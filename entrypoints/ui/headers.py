"""Headers on every dashboard answer: what the page may load and run, and who may frame it."""

from __future__ import annotations

import falcon

from jobtable.entrypoints.ui.guard import PREFIX

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    )
)
"""No inline script or style, nothing from another origin, no framing, forms post only here."""


class DashboardHeaders:
    """Falcon middleware: the page policy on everything under /ui (the API keeps its own)."""

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        if req.path == PREFIX or req.path.startswith(PREFIX + "/"):
            resp.set_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
            resp.set_header("X-Frame-Options", "DENY")
            resp.set_header("Referrer-Policy", "same-origin")
