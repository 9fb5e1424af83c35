"""The migration files of each engine: ``migrations/<engine>/NNNN_name.sql``, in order.

Every engine keeps the same numbers and names, so one version string means
the same step everywhere.
"""

from __future__ import annotations

import importlib.resources
import re

import attrs

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")


@attrs.frozen
class Migration:
    version: str
    sql: str


def load_migrations(engine: str) -> list[Migration]:
    """Every migration file of ``engine``, in version order."""
    folder = importlib.resources.files("jobtable.migrations").joinpath(engine)
    found = [
        Migration(version=entry.name.removesuffix(".sql"), sql=entry.read_text("utf-8"))
        for entry in folder.iterdir()
        if _NAME.fullmatch(entry.name)
    ]
    return sorted(found, key=lambda migration: migration.version)
