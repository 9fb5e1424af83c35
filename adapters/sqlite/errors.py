"""sqlite3 errors as the core's StoreError categories, with no driver text kept."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager

from jobtable.adapters.sql.errors import translating
from jobtable.core.errors import StoreError, StoreUnavailableError

_UNAVAILABLE_CODES = frozenset(
    {
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_CORRUPT,
    }
)


def to_store_error(error: Exception) -> StoreError:
    code = getattr(error, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreUnavailableError("database locked")
    if primary in _UNAVAILABLE_CODES:
        return StoreUnavailableError("database unavailable")
    return StoreError("database error")


def translated() -> AbstractContextManager[None]:
    """Re-raise any sqlite3 error as a StoreError; the driver's text stays out of it."""
    return translating((sqlite3.Error,), to_store_error, keep_cause=True)
