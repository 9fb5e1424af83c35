"""Hearing of jobs other connections commit, from a store that can be watched (file events, NOTIFY)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from jobtable.core.ports import JobStore, Watcher


class StoreWatch:
    """Calls ``notice`` soon after another connection commits, from ``start`` until ``stop``.

    Nothing happens when the store cannot be watched, or when not ``enabled``
    (runners sharing one watcher).
    """

    def __init__(self, store: JobStore, notice: Callable[[], None], *, enabled: bool) -> None:
        self._store = store
        self._notice = notice
        self._enabled = enabled
        self._watcher: Watcher | None = None

    def start(self) -> None:
        watch = getattr(self._store, "watch", None) if self._enabled else None
        if watch is not None:
            self._watcher = cast(Watcher, watch(self._notice))

    def stop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
