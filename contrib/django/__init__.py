"""jobtable as a backend for Django's tasks framework (``django.tasks``, Django 6.1).

    INSTALLED_APPS += ["jobtable.contrib.django"]
    TASKS = {"default": {"BACKEND": "jobtable.contrib.django.JobtableBackend"}}

``@task`` functions enqueue through jobtable (``backend.py``) and run in
``python manage.py jobtable_worker`` (``management/commands/``), which takes the
worker's usual options. Each task is a kind named by its module path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobtable.contrib.django.backend import JobtableBackend

__all__ = ["JobtableBackend"]


def __getattr__(name: str) -> Any:
    """``JobtableBackend`` is imported on first use: the app's module loads before settings."""
    if name == "JobtableBackend":
        from jobtable.contrib.django.backend import JobtableBackend

        return JobtableBackend
    raise AttributeError(name)
