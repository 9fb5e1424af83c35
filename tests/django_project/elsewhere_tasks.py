"""A task no worker registers: its job waits, and says why."""

from django.tasks import task


@task
def nobody_runs_me() -> None:
    return None
