"""Driver errors turned into the core's StoreError categories, with none of their text."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from jobtable.core.errors import StoreError


class translating:
    """Re-raise any of ``caught`` as ``to_store_error``'s StoreError; the driver's error stays
    its cause only when ``keep_cause`` (never where its text may hold a URL or a password).

    A class, not a generator: every store call passes through one, on the hot path.
    """

    __slots__ = ("_caught", "_keep_cause", "_to_store_error")

    def __init__(
        self,
        caught: tuple[type[Exception], ...],
        to_store_error: Callable[[Exception], StoreError],
        *,
        keep_cause: bool,
    ) -> None:
        self._caught = caught
        self._to_store_error = to_store_error
        self._keep_cause = keep_cause

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None or not isinstance(error, self._caught):
            return
        translated = self._to_store_error(error)
        if self._keep_cause:
            raise translated from error
        raise translated from None
