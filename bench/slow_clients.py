"""How many idle or slow connections from one client it takes to stop ``serve`` answering.

Starts ``jobtable serve --workers 0`` on a SQLite file over loopback, then
opens connections in steps, each of one kind, and after every step asks
``GET /health`` on a new connection:

- ``half-open``: a request line and one header, never finished (slowloris);
- ``idle``: connected, nothing sent (a browser's spare connection, a port scan).

It stops at the first step whose ``/health`` gets no answer within
``--probe-timeout`` seconds, or at ``--max``. It prints, for each kind, the
last count held with ``/health`` still answering, the first that stopped it
(if any), the slowest ``/health`` answer seen, and how many of the held
connections the server itself had closed by the end.
Run by hand: ``bench/run slow_clients.py`` (``--max 400`` for a short check).
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_server import free_port, wait_until_up

JOBTABLE = str(Path(sys.executable).with_name("jobtable"))
HALF_OPEN = b"GET /health HTTP/1.1\r\nHost: bench\r\n"


def probe(port: int, timeout: float) -> float | None:
    """Seconds ``GET /health`` took on a new connection, or None without a 200 in time."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
            answer = b""
            while b"\r\n" not in answer:
                chunk = conn.recv(4096)
                if not chunk:
                    return None
                answer += chunk
    except OSError:  # refused, reset, or timed out
        return None
    return time.monotonic() - started if answer.startswith(b"HTTP/1.1 200") else None


def closed_by_server(held: list[socket.socket]) -> int:
    """How many held connections the server has closed (readable with nothing to read)."""
    closed = 0
    for conn in held:
        poller = select.poll()  # not select(): past descriptor 1024
        poller.register(conn, select.POLLIN)
        if not poller.poll(0):
            continue
        try:
            if conn.recv(4096, socket.MSG_PEEK) == b"":
                closed += 1
        except OSError:
            closed += 1
    return closed


def measure(port: int, kind: str, args: argparse.Namespace) -> dict[str, object]:
    held: list[socket.socket] = []
    last_ok, stopped_at, slowest = 0, None, 0.0
    try:
        while len(held) < args.max:
            for _ in range(args.step):
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                if kind == "half-open":
                    conn.sendall(HALF_OPEN)
                held.append(conn)
            took = probe(port, args.probe_timeout)
            if took is None:
                stopped_at = len(held)
                break
            last_ok, slowest = len(held), max(slowest, took)
        return {
            "kind": kind,
            "held with /health answering": last_ok,
            "first count that stopped /health": stopped_at or f"none up to {args.max}",
            "slowest /health (ms)": round(slowest * 1000, 1),
            "held connections the server closed": closed_by_server(held),
        }
    finally:
        for conn in held:
            conn.close()


def settle(port: int, within: float = 120.0) -> None:
    """Wait until ``/health`` answers again after a step that stopped it."""
    deadline = time.monotonic() + within
    while probe(port, 2.0) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the server never answered again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", type=int, default=3000, help="connections held at most")
    parser.add_argument("--step", type=int, default=50)
    parser.add_argument("--probe-timeout", type=float, default=5.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.max + 100)), hard))
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "JOBTABLE_API_TOKEN": "bench-token"}
        server = subprocess.Popen(
            [JOBTABLE, "serve", "--workers", "0", "--listen", f"127.0.0.1:{port}",
             "--database", str(Path(folder) / "jobs.db"), "--log-level", "warning"],
            env=env,
        )  # fmt: skip
        try:
            wait_until_up(f"http://127.0.0.1:{port}/health")
            for kind in ("half-open", "idle"):
                print(measure(port, kind, args), flush=True)
                settle(port)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)


if __name__ == "__main__":
    main()
