"""Tasks outside any installed app: the worker registers them only when ``--tasks`` names
this module."""

from django.tasks import task


@task
def shout(word: str) -> str:
    return word.upper()
