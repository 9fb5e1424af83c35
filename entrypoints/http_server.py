"""waitress, with the graceful stop it does not have built in.

On stop: close the listening socket (no new connections), end the event
streams and long-polls (they would otherwise wait out the grace period),
let requests already received finish and their responses flush, then close
every connection and the worker threads, all within a deadline. Idle
keep-alive connections do not hold the stop up, nor do requests whose
headers have not all arrived (nothing was asked yet) or that are overdue.

Threads: ``threads`` for ordinary requests, and apart from them, one for
each of the ``stream_slots`` streams and long-polls the app lets wait at
once (it refuses more with a 503), so neither takes the other's threads
(see ``http_pools``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.task import ErrorTask, WSGITask

from jobtable.entrypoints.http import json_text
from jobtable.entrypoints.http.body import MAX_BODY_BYTES
from jobtable.entrypoints.http.errors import envelope_for_status
from jobtable.entrypoints.http.streams import may_wait
from jobtable.entrypoints.http_connections import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    GuardedChannel,
    create_guarded_server,
)
from jobtable.entrypoints.http_pools import MayWait, TwoPools

_POLL_INTERVAL = 0.01
CONNECTION_LIMIT = 1000
"""Open connections held beside those the stream slots may hold; at the limit the one that
has waited longest for its client is closed to make room (see ``http_connections``)."""


class _JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's own refusals (a malformed request, a body over the limit) in our envelope."""

    def execute(self) -> None:
        error = self.request.error
        body = json_text.dumps(envelope_for_status(int(error.code))).encode("utf-8")
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.response_headers.append(("X-Content-Type-Options", "nosniff"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _ClosingWhenStoppingTask(WSGITask):  # type: ignore[misc]
    """Once the server is stopping, every answer says ``Connection: close`` and closes.

    Without it a keep-alive client under load keeps sending requests on its
    open connection, and the graceful stop waits for it until the grace ends.
    """

    def build_response_header(self) -> bytes:
        if getattr(self.channel.server, "jobtable_stopping", False):
            self.set_close_on_finish()
        header: bytes = super().build_response_header()
        return header


class _JsonErrorChannel(GuardedChannel):
    error_task_class = _JsonErrorTask
    task_class = _ClosingWhenStoppingTask


class HttpServer:
    def __init__(
        self,
        app: Any,
        *,
        host: str,
        port: int,
        threads: int,
        logger: logging.Logger,
        stream_slots: int = 0,
        may_wait: MayWait = may_wait,
        end_streams: Callable[[], None] | None = None,
        sock: socket.socket | None = None,
        connection_limit: int = CONNECTION_LIMIT,
        header_timeout: float = HEADER_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
    ) -> None:
        """``may_wait`` tells the requests that may wait (the API's streams and
        long-polls) from the rest; they get ``stream_slots`` threads of their own. ``end_streams`` is called
        once stop begins: it must make every stream and long-poll answer now
        (``runner.changes.close``). With ``sock`` it serves that listening socket
        instead of ``host:port``: one several processes share (``--processes``).
        ``connection_limit`` connections (beside ``stream_slots``) are held at once, each
        request given ``header_timeout`` and ``body_timeout`` to arrive (``http_connections``)."""
        self._log = logger
        self._end_streams = end_streams
        self._pools = TwoPools(ordinary=threads, waiting=stream_slots, may_wait=may_wait)
        # waitress warns "Task queue depth is N" on every request that waits for a
        # thread: under load that is thousands of lines a second and real CPU.
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
        where: dict[str, Any] = {} if sock is not None else {"host": host, "port": port}
        self._server: Any = create_guarded_server(
            app,
            **where,
            sock=sock,
            dispatcher=self._pools,
            channel_class=_JsonErrorChannel,
            logger=logger,
            connection_limit=connection_limit + stream_slots,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            ident="jobtable",
            clear_untrusted_proxy_headers=True,
            channel_timeout=IDLE_TIMEOUT,
            # Refused by waitress before it buffers the body; the app checks again.
            max_request_body_size=MAX_BODY_BYTES,
        )
        self._thread = threading.Thread(target=self._server.run, name="jobtable-http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        return str(self._server.effective_host), int(self._server.effective_port)

    def start(self) -> None:
        self._thread.start()

    def stop(self, *, deadline: float) -> bool:
        """Stop by ``deadline`` (time.monotonic()); True if every request finished in time."""
        self._server.jobtable_stopping = True
        self._in_loop(lambda: wasyncore.dispatcher.close(self._server))
        if self._end_streams is not None:
            self._end_streams()
        drained = self._wait_for_idle(deadline)
        if not drained:
            self._log.warning("HTTP requests still running at the end of the grace period")
        self._in_loop(self._close_everything)
        self._thread.join(max(0.0, deadline - time.monotonic()) + 1.0)
        self._server.task_dispatcher.shutdown(timeout=max(0.0, deadline - time.monotonic()))
        return drained

    def _in_loop(self, thunk: Any) -> None:
        """Run ``thunk`` in the server's loop thread, which owns every socket; wait for it."""
        done = threading.Event()

        def run() -> None:
            try:
                thunk()
            finally:
                done.set()

        trigger = self._server.trigger
        if not self._thread.is_alive() or trigger._closed:
            thunk()
            return
        try:
            trigger.pull_trigger(run)
        except OSError:  # the loop closed its trigger (a hang-up on its pipe): none will run it
            thunk()
            return
        done.wait(5.0)

    def _busy(self) -> bool:
        if self._pools.queued():
            return True
        try:
            channels = [c for c in list(self._server._map.values()) if isinstance(c, HTTPChannel)]
        except RuntimeError:  # the loop thread changed the map while we copied it
            return True
        now = time.monotonic()
        return any(_holds_the_stop(c, now) for c in channels)

    def _wait_for_idle(self, deadline: float) -> bool:
        while self._busy():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_INTERVAL)
        return True

    def _close_everything(self) -> None:
        for dispatcher in list(self._server._map.values()):
            if dispatcher is not self._server.trigger:
                dispatcher.close()
        self._server.trigger.close()


def _holds_the_stop(channel: Any, now: float) -> bool:
    """A request received and not yet answered, or one whose body is arriving in time."""
    if not isinstance(channel, GuardedChannel):
        return False
    if channel.serving:
        return True
    return (
        channel.request is not None
        and channel.headers_since is not None
        and not channel.overdue(now)
    )
