"""The ceiling for this stack: the same waitress wrapper serving one static JSON resource."""

from __future__ import annotations

import argparse
import logging
import signal
import threading

import falcon

from jobtable.entrypoints.http_server import HttpServer


class Static:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"id": "019b76da-a800-7e83-b4b1-96a8a8165536", "status": "succeeded"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    app = falcon.App()
    app.add_route("/static", Static())
    logging.basicConfig(level=logging.INFO)
    server = HttpServer(
        app, host="127.0.0.1", port=args.port, threads=args.threads, logger=logging.getLogger()
    )
    server.start()
    print(f"listening on http://127.0.0.1:{args.port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop(deadline=0)


if __name__ == "__main__":
    main()
