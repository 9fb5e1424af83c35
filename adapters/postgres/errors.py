"""psycopg errors as the core's StoreError categories, with no driver text (or URL) kept."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from jobtable.core.errors import StoreError, StoreUnavailableError

_LOCKED = (pg_errors.LockNotAvailable, pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def to_store_error(error: Exception) -> StoreError:
    if isinstance(error, _LOCKED):
        return StoreUnavailableError("database locked")
    if isinstance(error, PoolTimeout | psycopg.OperationalError):
        return StoreUnavailableError("database unavailable")
    return StoreError("database error")


@contextmanager
def translated() -> Iterator[None]:
    """Re-raise any psycopg or pool error as a StoreError; the driver's text stays out of it."""
    try:
        yield
    except (psycopg.Error, PoolTimeout) as error:
        raise to_store_error(error) from None
