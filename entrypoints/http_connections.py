"""waitress's server and connections, kept answering whatever idle or slow clients hold.

waitress stops accepting at its connection limit and keeps a request it is
still reading until the connection has been quiet for its idle timeout, so
a couple of hundred connections that send half a request, or nothing, left
every other client unanswered. Here:

- a request must arrive whole in time: its headers within
  ``header_timeout`` of its first byte (of the connection's opening, for
  the first request), its body within ``body_timeout`` of its headers;
  a connection past that is closed, however it trickles bytes;
- a kept-alive connection with no request is closed after
  ``idle_timeout`` (waitress's ``channel_timeout``);
- at the limit the server still accepts: it closes the connection that has
  waited longest for its client (one still being read first, then an idle
  one) to make room. Only when every connection is serving a request does
  it stop accepting, as waitress does, until one is done;
- the event loop uses ``poll``, not ``select`` (which stops at descriptor
  1024), and the process's descriptor limit is raised to fit the limit.

This bounds what one client can hold; in front of the open internet a
reverse proxy still belongs (the deployment guide says which limits to set).
"""

from __future__ import annotations

import logging
import resource
import socket
import time
from collections.abc import Iterator
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

HEADER_TIMEOUT = 10.0
"""Seconds for a request's headers to arrive, from its first byte or the connection's opening."""
BODY_TIMEOUT = 30.0
"""Seconds for a request's body (at most 64 KiB) to arrive once its headers have."""
IDLE_TIMEOUT = 60
"""Seconds a kept-alive connection may wait, quiet, for its next request."""
ACCEPT_BATCH = 64
"""Connections accepted in one turn of the event loop, at most."""
RESERVED_DESCRIPTORS = 64
"""Descriptors kept beside the connections: database connections, files, the watcher."""


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """A connection that knows since when it waits for its client, and since when the
    request it is reading began (None when it reads none: serving, or kept alive)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.waiting_since = time.monotonic()
        self.reading_since: float | None = self.waiting_since
        self.headers_since: float | None = None
        super().__init__(*args, **kwargs)

    def received(self, data: bytes) -> bool:
        now = time.monotonic()
        if data and self.reading_since is None:
            self.reading_since = now
        done: bool = super().received(data)
        request = self.request
        if request is None:
            self.reading_since = self.headers_since = None
        elif request.headers_finished and self.headers_since is None:
            self.headers_since = now
        return done

    def service(self) -> None:
        super().service()
        self.waiting_since = time.monotonic()

    @property
    def serving(self) -> bool:
        """A request received and not yet answered, or an answer still being sent."""
        return bool(self.requests) or bool(self.total_outbufs_len)

    def overdue(self, now: float) -> bool:
        """Reading a request for longer than its server allows."""
        if self.serving or self.reading_since is None:
            return False
        if self.headers_since is not None:
            return bool(now - self.headers_since > self.server.body_timeout)
        return bool(now - self.reading_since > self.server.header_timeout)


class GuardedServer(TcpWSGIServer):  # type: ignore[misc]
    """waitress's TCP server, closing overdue connections and making room at its limit."""

    channel_class = GuardedChannel
    header_timeout = HEADER_TIMEOUT
    body_timeout = BODY_TIMEOUT
    made_room = 0
    warned_at: float | None = None

    def readable(self) -> bool:
        wall = time.time()
        if wall >= self.next_channel_cleanup:
            self.next_channel_cleanup = wall + self.adj.cleanup_interval
            self.maintenance(wall)
        if not self.accepting:
            return False
        return len(self.active_channels) < self.adj.connection_limit or any(
            _may_close(channel) for channel in self.active_channels.values()
        )

    def handle_accept(self) -> None:
        """Accept every connection waiting (up to ACCEPT_BATCH): one loop turn, not one each,
        since every turn of waitress's loop visits every connection."""
        room: Iterator[GuardedChannel] | None = None
        for _ in range(ACCEPT_BATCH):
            if len(self.active_channels) >= self.adj.connection_limit:
                room = room or iter(self._longest_waiting_first())
                oldest = next(room, None)
                if oldest is None:
                    return  # every connection is serving: accept once one is done
                oldest.handle_close()
                self._count_made_room()
            try:
                accepted = self.accept()
                if accepted is None:
                    return
                conn, addr = accepted
                self.set_socket_options(conn)
            except OSError as error:  # gone before it was accepted, or out of descriptors
                if self.adj.log_socket_errors:
                    self.logger.warning("accepting a connection failed: %s", type(error).__name__)
                return
            self.channel_class(self, conn, self.fix_addr(addr), self.adj, map=self._map)

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # kept-alive connections quiet past the idle timeout
        monotonic = time.monotonic()
        for channel in list(self.active_channels.values()):
            if isinstance(channel, GuardedChannel) and channel.overdue(monotonic):
                channel.will_close = True

    def _longest_waiting_first(self) -> list[GuardedChannel]:
        """The connections that may be closed for room: those still being read before
        those kept alive, each the one waiting longest first."""
        candidates = [c for c in self.active_channels.values() if _may_close(c)]
        return sorted(candidates, key=lambda c: (c.reading_since is None, c.waiting_since))

    def _count_made_room(self) -> None:
        """Log the connections closed for room: the first at once, then at most a minute's."""
        self.made_room += 1
        now = time.monotonic()
        if self.warned_at is None or now - self.warned_at >= 60:
            self.logger.warning(
                "open connections at the limit of %d: closed %d that waited longest for their "
                "clients to make room for new ones",
                self.adj.connection_limit,
                self.made_room,
            )
            self.warned_at, self.made_room = now, 0


def _may_close(channel: object) -> bool:
    """Neither serving a request nor closing already: its client is the one keeping it."""
    return isinstance(channel, GuardedChannel) and not (channel.serving or channel.will_close)


def create_guarded_server(
    app: Any,
    *,
    dispatcher: Any,
    sock: socket.socket | None,
    channel_class: type[GuardedChannel],
    logger: logging.Logger,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    **adjustments: Any,
) -> GuardedServer:
    """A ``GuardedServer`` on ``sock``, or on the ``host`` and ``port`` in ``adjustments``
    (its first address), with waitress's other adjustments, the loop on ``poll`` and the
    connection limit cut to the descriptors the process may open."""
    adjustments["connection_limit"] = descriptors_for(adjustments["connection_limit"], logger)
    adj = Adjustments(
        **adjustments,
        **({"sockets": [sock]} if sock is not None else {}),
        asyncore_use_poll=True,
        cleanup_interval=1,  # the timeouts above are checked every second
    )
    if sock is not None:
        info = (sock.family, sock.type, sock.proto, sock.getsockname())
        server = GuardedServer(
            app, {}, True, sock, dispatcher=dispatcher, adj=adj, bind_socket=False, sockinfo=info
        )
    else:
        server = GuardedServer(app, {}, True, None, dispatcher=dispatcher, adj=adj,
                               sockinfo=adj.listen[0])  # fmt: skip
    server.channel_class = channel_class
    server.header_timeout, server.body_timeout = header_timeout, body_timeout
    return server


def descriptors_for(connections: int, logger: logging.Logger) -> int:
    """How many connections the process can hold, up to ``connections``: its soft
    descriptor limit is raised towards the hard one to fit them (and a reserve)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + RESERVED_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return connections
    room = max(1, soft - RESERVED_DESCRIPTORS)
    logger.warning(
        "the descriptor limit (ulimit -n %d) allows %d connections, not %d; raise it "
        "to hold more", soft, room, connections,
    )  # fmt: skip
    return room
