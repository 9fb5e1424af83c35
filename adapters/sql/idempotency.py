"""Idempotency keys: one request takes a key, its answer is kept, a replay reads it back."""

from __future__ import annotations

import datetime
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlPart
from jobtable.adapters.sql.enqueue import UNIQUE_TRIES
from jobtable.adapters.sql_rows import idempotency_parameters, kept_answer
from jobtable.core.errors import StoreError
from jobtable.core.idempotency import KeptAnswer


class SqlIdempotency(SqlPart):
    def begin_idempotent(
        self, key: str, request_hash: str, *, now: datetime.datetime
    ) -> KeptAnswer | None:
        params = idempotency_parameters(key, request_hash, now, stamp=self._engine.stamp)

        def take(conn: Connection) -> tuple[bool, Any]:
            conn.execute(self._engine.sql("forget_stale_idempotency_key"), params)
            if conn.execute(self._engine.sql("take_idempotency_key"), params).rowcount == 1:
                return True, None  # taken: this request answers
            return False, conn.execute(self._engine.sql("kept_answer"), params).fetchone()

        for _ in range(UNIQUE_TRIES):
            taken, row = self._engine.write(take)
            if taken:
                return None
            if row is not None:
                return kept_answer(row, self._engine.parse_time)
            # The holder let it go between the two statements: try to take it again.
        raise StoreError("database error")

    def finish_idempotent(self, key: str, *, status: int, body: str) -> None:
        self._change("answer_idempotency_key", {"key": key, "status": status, "body": body})

    def drop_idempotent(self, key: str) -> None:
        self._change("drop_unanswered_key", {"key": key})
