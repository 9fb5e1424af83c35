"""The dashboard's script and stylesheet, shipped in the package and served by name.

Only the files listed here are served (no path from a request reaches the
file system); they are read once, when the app is made.
"""

from __future__ import annotations

import importlib.resources

import falcon

FILES = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}


class StaticFiles:
    auth_exempt = True

    def __init__(self) -> None:
        folder = importlib.resources.files("jobtable.entrypoints.ui") / "static"
        self._files = {name: (folder / name).read_bytes() for name in FILES}

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        if name not in self._files:
            raise falcon.HTTPNotFound()
        resp.content_type = FILES[name]
        resp.data = self._files[name]
