"""The Python cost of one HTTP request, without a server or sockets: the WSGI app called in a loop.

Calls ``create_app``'s app (SQLite, synchronous NORMAL, a runner without
workers) for POST /api/v1/jobs (a noop job) and GET /api/v1/jobs/{id}, and a
bare Falcon app with one static resource, as ``static_server.py`` serves it,
N times each, and prints microseconds a request. Under
``valgrind --tool=callgrind`` (two runs with different N, subtracted) it
gives instructions a request: repeatable on a busy machine, so it shows what
a change to the app's code costs or saves.

    python bench/http_inprocess.py DATABASE N [post|get|static|all]
"""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Callable
from typing import Any

TOKEN = "bench-token-0123456789abcdef0123456789"


def environ(method: str, path: str, body: bytes = b"") -> dict[str, Any]:
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {TOKEN}",
        "HTTP_HOST": "127.0.0.1:8000",
    }


def call(app: Callable[..., Any], method: str, path: str, body: bytes = b"") -> bytes:
    status: list[str] = []

    def start_response(line: str, headers: Any, exc_info: Any = None) -> None:
        status.append(line)

    chunks = app(environ(method, path, body), start_response)
    data = b"".join(chunks)
    if not status[0].startswith("2"):
        raise RuntimeError(f"{method} {path}: {status[0]} {data!r}")
    return data


def timed(label: str, n: int, request: Callable[[], object]) -> None:
    started = time.perf_counter()
    for _ in range(n):
        request()
    print(f"{label}: {(time.perf_counter() - started) / n * 1e6:.1f} us a request")


def main() -> int:
    import falcon

    from jobtable.adapters.system_clock import SystemClock
    from jobtable.core import Runner
    from jobtable.entrypoints.http.app import create_app
    from jobtable.entrypoints.wiring import open_store

    database, n = sys.argv[1], int(sys.argv[2])
    which = sys.argv[3] if len(sys.argv) > 3 else "all"
    clock = SystemClock()
    store = open_store(database, synchronous="normal", now=clock.now())
    runner = Runner(store, clock, workers=0)
    app = create_app(runner, api_token=TOKEN, version="bench")
    post = json.dumps({"kind": "noop", "payload": {}}).encode()
    job_id = json.loads(call(app, "POST", "/api/v1/jobs", post))["id"]

    class Static:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {"id": "019b76da-a800-7e83-b4b1-96a8a8165536", "status": "succeeded"}

    static = falcon.App()
    static.add_route("/static", Static())
    try:
        if which in ("post", "all"):
            timed("POST /api/v1/jobs", n, lambda: call(app, "POST", "/api/v1/jobs", post))
        if which in ("get", "all"):
            timed("GET /api/v1/jobs/{id}", n, lambda: call(app, "GET", f"/api/v1/jobs/{job_id}"))
        if which in ("static", "all"):
            timed("GET /static", n, lambda: call(static, "GET", "/static"))
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
