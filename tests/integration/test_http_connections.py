"""Idle and slow clients over real loopback sockets: they never stop others being served.

Every wait here is on a condition with a deadline (a socket timeout long
enough for a loaded machine), never on a moment: a socket the server
closes reads b"" at once, and /health either answers or the test fails.
"""

from __future__ import annotations

import http.client
import logging
import socket
import time
from collections.abc import Iterator

import pytest

from jobtable.adapters.memory import MemoryStore
from jobtable.entrypoints.http.app import create_app
from jobtable.entrypoints.http_server import HttpServer
from tests.support.harness import JobSystem

DEADLINE = 60.0
HALF_A_REQUEST = b"GET /health HTTP/1.1\r\nHost: test\r\n"


@pytest.fixture
def serve() -> Iterator:
    """Starts a server with the API on a memory store; stopped at the end unless it was."""
    started: list[tuple[HttpServer, JobSystem]] = []

    def start(**options) -> HttpServer:
        system = JobSystem(MemoryStore(), workers=0)
        app = create_app(system.runner, api_token="t", version="1", logger=system.logs.logger)
        server = HttpServer(app, host="127.0.0.1", port=0, threads=2,
                            logger=logging.getLogger("test.http"), **options)  # fmt: skip
        server.start()
        started.append((server, system))
        return server

    yield start
    for server, system in started:
        if not getattr(server, "stopped", False):
            server.stop(deadline=time.monotonic() + 5)
        system.stop()


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    yield held
    for conn in held:
        conn.close()


def open_connections(server, held, count: int, first_bytes: bytes = b"") -> list[socket.socket]:
    made = []
    for _ in range(count):
        conn = socket.create_connection(server.address, timeout=DEADLINE)
        if first_bytes:
            conn.sendall(first_bytes)
        made.append(conn)
    held.extend(made)
    return made


def health(server, conn: http.client.HTTPConnection | None = None) -> int:
    conn = conn or http.client.HTTPConnection(*server.address, timeout=DEADLINE)
    conn.request("GET", "/health")
    response = conn.getresponse()
    response.read()
    return response.status


def closed_by_the_server(conn: socket.socket) -> bool:
    """Blocks until the server closes ``conn`` (True) or sends something (False)."""
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_hundreds_of_half_open_and_idle_connections_leave_health_answering(serve, sockets):
    server = serve()
    open_connections(server, sockets, 300, HALF_A_REQUEST)
    open_connections(server, sockets, 200)
    assert health(server) == 200


def test_at_the_limit_the_connection_waiting_longest_is_closed_to_make_room(serve, sockets):
    server = serve(connection_limit=20, header_timeout=3600)  # room only by closing one
    oldest = open_connections(server, sockets, 1, HALF_A_REQUEST)[0]
    open_connections(server, sockets, 59, HALF_A_REQUEST)
    assert health(server) == 200
    assert closed_by_the_server(oldest)


def test_a_request_that_never_finishes_arriving_is_closed_and_a_kept_alive_one_is_not(
    serve, sockets
):
    server = serve(header_timeout=0.5, body_timeout=0.5)
    kept_alive = http.client.HTTPConnection(*server.address, timeout=DEADLINE)
    assert health(server, kept_alive) == 200
    (nothing,) = open_connections(server, sockets, 1)
    (headers,) = open_connections(server, sockets, 1, HALF_A_REQUEST)
    (body,) = open_connections(
        server, sockets, 1,
        b"POST /api/v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Length: 40\r\n\r\n{\"kind\"",
    )  # fmt: skip
    assert closed_by_the_server(nothing)
    assert closed_by_the_server(headers)
    assert closed_by_the_server(body)
    # Idle longer than a request may take to arrive, and still served: that is the
    # kept-alive idle timeout's to end, not the request's.
    assert health(server, kept_alive) == 200


def test_a_client_trickling_its_headers_is_closed_however_often_it_sends(serve, sockets):
    server = serve(header_timeout=0.5)
    (trickling,) = open_connections(server, sockets, 1)
    trickling.settimeout(0.05)
    closed = False
    deadline = time.monotonic() + DEADLINE
    while not closed and time.monotonic() < deadline:  # a header byte at a time
        try:
            trickling.sendall(b"X")
            closed = trickling.recv(1024) == b""
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed = True
    assert closed


def test_half_open_connections_do_not_hold_up_a_graceful_stop(serve, sockets):
    server = serve()
    open_connections(server, sockets, 5, HALF_A_REQUEST)
    assert health(server) == 200
    drained = server.stop(deadline=time.monotonic() + DEADLINE)
    server.stopped = True
    assert drained
