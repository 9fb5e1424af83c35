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
        shown, after, ended = versions_read(job_id, read_events(after), after)
        yield from shown
        if ended:
            return
        wait_for_change()


def versions_read(
    job_id: str, got: JobEvents | None, after: int | None
) -> tuple[list[Job], int | None, bool]:
    """One read of ``job_versions``: the versions to show, the version read up to, and
    whether the job has ended. For a follower that reads and waits its own way (asyncio)."""
    if got is None:
        raise JobNotFoundError(job_id)
    shown = ([got.reset] if got.reset is not None else []) + list(got.events)
    if shown:
        after = shown[-1].version
    # Only the newest state read can end it: a failure earlier in the history may have
    # been retried since.
    return [event.job for event in shown], after, bool(shown) and shown[-1].job.status.finished


def check_wait_timeout(timeout: object) -> None:
    """ValueError unless a wait's ``timeout`` is None or seconds, 0 or more."""
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout >= 0
    ):
        raise ValueError("wait: timeout must be None or seconds, 0 or more")


def finished_or_wait(
    job_id: str, job: Job | None, timeout: float | None, left: float | None
) -> Job | float:
    """One look of a wait for a job to finish: the job once finished, else the seconds to
    wait for a change before reading again (``left``: to the wait's deadline; None: none).
    Raises JobNotFoundError, or TimeoutError once the deadline has passed."""
    if job is None:
        raise JobNotFoundError(job_id)
    if job.status.finished:
        return job
    if left is None:
        return LOOK_AGAIN
    if left <= 0:
        raise TimeoutError(f"job {job_id} has not finished within {timeout} s")
    return min(LOOK_AGAIN, left)
