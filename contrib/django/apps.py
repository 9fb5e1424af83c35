"""The Django app: checks at start that every jobtable task backend can be used."""

from __future__ import annotations

from django.apps import AppConfig


class JobtableConfig(AppConfig):
    name = "jobtable.contrib.django"
    label = "jobtable"
    verbose_name = "jobtable"

    def ready(self) -> None:
        """Make each jobtable backend now, so a database it cannot use (psycopg2, an
        in-memory SQLite, another engine) stops the start with one clear error."""
        from django.conf import settings
        from django.tasks import task_backends

        for alias, params in getattr(settings, "TASKS", {}).items():
            if params.get("BACKEND") == "jobtable.contrib.django.JobtableBackend":
                task_backends[alias]
