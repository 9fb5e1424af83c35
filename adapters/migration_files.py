"""The migration files of each engine: ``migrations/<engine>/NNNN_name.sql``, in order.

Every engine keeps the same numbers and names, so one version string means
the same step everywhere. A step that changes rows to make them readable
says which with ``RETURNING id AS repaired``; the migrator logs how many.
"""

from __future__ import annotations

import importlib.resources
import logging
import re
from collections.abc import Iterable
from typing import Any

import attrs

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")

REPAIRED = "repaired"
"""The name of the column a repairing statement returns: the id of each row it changed."""

_log = logging.getLogger("jobtable.migrate")


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


def log_repaired(version: str, ids: Iterable[Any]) -> None:
    """Say how many rows a step repaired (nothing when it repaired none)."""
    count = len(set(ids))
    if count:
        _log.warning("migration repaired rows version=%s rows=%d", version, count)
