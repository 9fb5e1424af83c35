"""``jobtable enqueue --wait`` and ``jobtable get ID --follow``: every change of a job, in
order, until it ends.

The changes come from the job's kept history (``runner.events``), read again
whenever a change is heard of (this process's writes, another process's
commit or NOTIFY), so none is skipped however fast they come: the same
ordered stream the HTTP API serves as Server-Sent Events. On a terminal one
live line is redrawn on stderr; piped, every change but the last is a JSON
line on stdout. Either way the final job is printed as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO

from jobtable.core import Job
from jobtable.core.changes import Subscription
from jobtable.core.jobs import JobEvents

FALLBACK_INTERVAL = 0.5
"""Read the history again at least this often, should a change notice be missed."""


def _line(job: Job) -> str:
    public = job.to_public()
    result = "" if public["result"] is None else " " + json.dumps(public["result"])
    return f"{public['status']}{result}"


def follow(
    read_events: Callable[[int | None], JobEvents | None],
    subscription: Subscription,
    *,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    live: bool | None = None,
) -> Job:
    """Report each change of the job until it finishes; return the finished job.

    ``read_events(after)`` gives the changes after version ``after`` (None:
    all that are kept); ``subscription`` is poked when the job may have
    changed, and must be taken before the first read.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    live = err.isatty() if live is None else live
    after: int | None = None
    while True:
        got = read_events(after)
        if got is None:
            raise LookupError("the job is gone")
        shown = ([got.reset] if got.reset is not None else []) + list(got.events)
        for event in shown:
            after = event.version
            job = event.job
            # Only the newest state read can end it: a failure earlier in the history
            # may have been retried since.
            final = job.status.finished and event is shown[-1]
            if live:
                err.write("\r\033[K" + _line(job)[:200])
                err.flush()
            elif not final:
                out.write(json.dumps(job.to_public()) + "\n")
                out.flush()
            if final:
                if live:
                    err.write("\n")
                out.write(json.dumps(job.to_public()) + "\n")
                out.flush()
                return job
        subscription.wait(FALLBACK_INTERVAL)
