"""The runners table: a runner's row, its beat, and the list of live runners.

The liveness lock beside each row is the engine's own (SQLite: a file lock;
PostgreSQL: an advisory lock in a session of its own): the hooks below.
"""

from __future__ import annotations

import abc
import datetime

from jobtable.adapters.sql.engine import SqlPart
from jobtable.adapters.sql_rows import runner_parameters, runner_record
from jobtable.core.liveness import RunnerInfo, RunnerRecord


class SqlRegistry(SqlPart):
    def register_runner(self, info: RunnerInfo, *, now: datetime.datetime) -> None:
        """Take the liveness lock (or keep the one this store holds already) and write the row."""
        locked_on = self._hold_liveness(info.id)
        params = {
            **runner_parameters(info),
            "started_at": self._engine.stamp(info.started_at),
            "now": self._engine.stamp(now),
            "locked_on": locked_on,
        }
        try:
            self._change("register_runner", params)
        except BaseException:
            self._release_liveness(info.id)
            raise

    def beat(self, runner_id: str, *, busy: int, now: datetime.datetime) -> bool:
        params = {
            "id": runner_id,
            "busy": busy,
            "now": self._engine.stamp(now),
            "locked_on": self._lock_location(runner_id),
        }
        return self._change("beat_runner", params) == 1

    def unregister_runner(self, runner_id: str) -> None:
        try:
            self._change("unregister_runner", {"id": runner_id})
        finally:
            self._release_liveness(runner_id)

    def runners(self) -> list[RunnerRecord]:
        return [
            runner_record(row, parse_time=self._engine.parse_time) for row in self._rows("runners")
        ]

    @abc.abstractmethod
    def _hold_liveness(self, runner_id: str) -> str | None:
        """Take ``runner_id``'s liveness lock, or keep it; where it is held (None: no need to
        say). Raises StoreError when it cannot be taken."""

    @abc.abstractmethod
    def _lock_location(self, runner_id: str) -> str | None:
        """Where ``runner_id``'s lock is held now, as its row records it."""

    @abc.abstractmethod
    def _release_liveness(self, runner_id: str) -> None:
        """Let go of ``runner_id``'s lock, if this store holds it."""
