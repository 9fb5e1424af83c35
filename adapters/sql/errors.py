"""Driver errors turned into the core's StoreError categories, with none of their text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from jobtable.core.errors import StoreError


@contextmanager
def translating(
    caught: tuple[type[Exception], ...],
    to_store_error: Callable[[Exception], StoreError],
    *,
    keep_cause: bool,
) -> Iterator[None]:
    """Re-raise any of ``caught`` as ``to_store_error``'s StoreError; the driver's error stays
    its cause only when ``keep_cause`` (never where its text may hold a URL or a password)."""
    try:
        yield
    except caught as error:
        translated = to_store_error(error)
        if keep_cause:
            raise translated from error
        raise translated from None
