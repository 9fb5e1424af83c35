"""The SQL files an engine runs: shared ones written once, per-engine ones where SQL differs.

A shared file (``adapters/sql/queries``) names its parameters ``:name``; it is put into
the engine's placeholder style once, when first read. A file of the same name in the
engine's own ``queries`` folder replaces it. A ``{{name}}`` in any file is the fragment
``_name.sql``, the engine's own or else the shared one: where engines differ inside a
statement (``FOR UPDATE SKIP LOCKED``, JSON functions), as River's SQL templates do.
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
_FRAGMENT = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


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
        self._read: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        try:
            return self._read[name]  # a plain dict: read on every statement of the hot path
        except KeyError:
            text = self._read[name] = _text(self._package, self.style, name)
            return text


@functools.cache
def _text(package: str, style: Placeholders, name: str) -> str:
    return in_style(_with_fragments(package, _source(package, f"{name}.sql")), style)


def _source(package: str, file_name: str) -> str:
    """A query file's text as written (``:name`` parameters): the engine's, else the shared."""
    own = importlib.resources.files(package).joinpath("queries", file_name)
    if own.is_file():
        return own.read_text()
    return importlib.resources.files(SHARED).joinpath("queries", file_name).read_text()


def _with_fragments(package: str, sql: str) -> str:
    """``sql`` with each ``{{name}}`` replaced by its fragment (without the fragment's comments)."""

    def fragment(match: re.Match[str]) -> str:
        text = _source(package, f"_{match.group(1)}.sql")
        lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
        return _with_fragments(package, "\n".join(lines).strip())

    return _FRAGMENT.sub(fragment, sql)
