"""``jobtable enqueue --wait``: show a job's partial results as they change, then its end.

On a terminal one live line is redrawn on stderr; piped, every change is a
JSON line on stdout. Either way the final job is printed as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import IO

from jobtable.core import Job

FALLBACK_INTERVAL = 0.5
"""Re-read the job at least this often, should a change notice be missed."""


def _line(job: Job) -> str:
    public = job.to_public()
    result = "" if public["result"] is None else " " + json.dumps(public["result"])
    return f"{public['status']}{result}"


def follow(
    read: Callable[[], Job | None],
    changed: threading.Event,
    *,
    out: IO[str] = sys.stdout,
    err: IO[str] = sys.stderr,
    live: bool | None = None,
) -> Job:
    """Report the job each time ``changed`` fires until it finishes; return the finished job."""
    live = err.isatty() if live is None else live
    last: Job | None = None
    while True:
        job = read()
        if job is None:
            raise LookupError("the job is gone")
        if job != last:
            if live:
                err.write("\r\033[K" + _line(job)[:200])
                err.flush()
            elif not job.status.finished:
                out.write(json.dumps(job.to_public()) + "\n")
                out.flush()
            last = job
        if job.status.finished:
            if live:
                err.write("\n")
            out.write(json.dumps(job.to_public()) + "\n")
            out.flush()
            return job
        changed.wait(FALLBACK_INTERVAL)
        changed.clear()
