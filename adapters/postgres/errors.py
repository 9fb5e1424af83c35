"""psycopg errors as the core's StoreError categories, with no driver text (or URL) kept."""

from __future__ import annotations

from contextlib import AbstractContextManager

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from jobtable.adapters.sql.errors import translating
from jobtable.core.errors import StoreError, StoreUnavailableError

_LOCKED = (pg_errors.LockNotAvailable, pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def to_store_error(error: Exception) -> StoreError:
    if isinstance(error, _LOCKED):
        return StoreUnavailableError("database locked")
    if isinstance(error, PoolTimeout | psycopg.OperationalError):
        return StoreUnavailableError("database unavailable")
    return StoreError("database error")


def translated() -> AbstractContextManager[None]:
    """Re-raise any psycopg or pool error as a StoreError; the driver's text stays out of it."""
    return translating((psycopg.Error, PoolTimeout), to_store_error, keep_cause=False)
