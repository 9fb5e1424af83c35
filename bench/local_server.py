"""A loopback server for a benchmark: a free port to start it on, and a wait until it answers."""

from __future__ import annotations

import http.client
import socket
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, within: float = 30.0) -> None:
    """Return once ``url`` answers; a server that never does stops the benchmark loudly."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except (OSError, http.client.HTTPException):  # not listening yet, or half up
            time.sleep(0.05)
    raise RuntimeError(f"{url} never answered")
