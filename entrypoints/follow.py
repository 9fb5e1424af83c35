"""``jobtable enqueue --wait`` and ``jobtable get ID --follow``: every change of a job, in
order, until it ends, as the client's ``follow`` yields them (core/following.py).

On a terminal one live line is redrawn on stderr; piped, every change but the last is a
JSON line on stdout. Either way the final job is printed as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import IO

from jobtable.core import Job


def _line(job: Job) -> str:
    public = job.to_public()
    result = "" if public["result"] is None else " " + json.dumps(public["result"])
    return f"{public['status']}{result}"


def show_changes(
    versions: Iterable[Job],
    *,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    live: bool | None = None,
) -> Job:
    """Report each version of a job (the last one finished); return the finished job."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    live = err.isatty() if live is None else live
    last: Job | None = None
    for job in versions:
        last = job
        if live:
            err.write("\r\033[K" + _line(job)[:200])
            err.flush()
        else:  # the final job too: it is the last line either way
            out.write(json.dumps(job.to_public()) + "\n")
            out.flush()
    if last is None:
        raise LookupError("the job told of no version")
    if live:
        err.write("\n")
        out.write(json.dumps(last.to_public()) + "\n")
        out.flush()
    return last
