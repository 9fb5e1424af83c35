"""Following a job: each of its versions in order, read from its kept history, until it ends.

Pure: reading the history and waiting for a change are given, so the client, the CLI and
tests drive the same rule (only the newest state read can end it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from jobtable.core.errors import JobNotFoundError
from jobtable.core.job_history import JobEvents
from jobtable.core.jobs import Job

LOOK_AGAIN = 0.5
"""Seconds a follower or waiter waits at most before it reads again, should a change
notice be missed (a notice is only "look again": a read always tells what changed)."""


def job_versions(
    job_id: str,
    read_events: Callable[[int | None], JobEvents | None],
    wait_for_change: Callable[[], object],
) -> Iterator[Job]:
    """Yield each version of the job, oldest kept first, ending with its finished one.

    ``read_events(after)`` gives the changes after version ``after`` (None:
    all that are kept); ``wait_for_change()`` returns when the job may have
    changed. A reader behind the kept history gets the current state first,
    as a reset. Raises JobNotFoundError when the job is not (or no longer) there.
    """
    after: int | None = None
    while True:
        got = read_events(after)
        if got is None:
            raise JobNotFoundError(job_id)
        shown = ([got.reset] if got.reset is not None else []) + list(got.events)
        for event in shown:
            after = event.version
            yield event.job
            # Only the newest state read can end it: a failure earlier in the history
            # may have been retried since.
            if event.job.status.finished and event is shown[-1]:
                return
        wait_for_change()
