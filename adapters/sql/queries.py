"""The SQL files an engine runs: shared ones written once, per-engine ones where SQL differs.

A shared file (``adapters/sql/queries``) names its parameters ``:name``; it
is put into the engine's placeholder style once, when first read. A file of
the same name in the engine's own ``queries`` folder replaces it, as written.
"""

from __future__ import annotations

import enum
import functools
import importlib.resources
import re

SHARED = "jobtable.adapters.sql"


class Placeholders(enum.Enum):
    """How an engine's driver spells a named parameter."""

    NAMED = ":{}"  # sqlite3
    PYFORMAT = "%({})s"  # psycopg

    def spell(self, name: str) -> str:
        return self.value.format(name)


# A string literal, a comment, a :name parameter (not a ::cast), or a lone percent sign.
_TOKEN = re.compile(r"'(?:[^']|'')*'|--[^\n]*|(?<![:\w]):([A-Za-z_]\w*)|%")


def in_style(sql: str, style: Placeholders) -> str:
    """``sql`` with its ``:name`` parameters in ``style``.

    Names inside string literals and comments are left alone; for psycopg,
    every literal ``%`` is doubled, as it reads ``%`` anywhere in a query.
    """
    if style is Placeholders.NAMED:
        return sql

    def spelled(match: re.Match[str]) -> str:
        name = match.group(1)
        return style.spell(name) if name else match.group(0).replace("%", "%%")

    return _TOKEN.sub(spelled, sql)


class Queries:
    """An engine's queries by name: its own file when it has one, else the shared one."""

    def __init__(self, engine_package: str, style: Placeholders) -> None:
        self._package = engine_package
        self.style = style

    def __getitem__(self, name: str) -> str:
        return _text(self._package, self.style, name)


@functools.cache
def _text(package: str, style: Placeholders, name: str) -> str:
    own = importlib.resources.files(package).joinpath(f"queries/{name}.sql")
    if own.is_file():
        return own.read_text()
    shared = importlib.resources.files(SHARED).joinpath(f"queries/{name}.sql")
    return in_style(shared.read_text(), style)
