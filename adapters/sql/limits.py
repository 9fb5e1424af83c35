"""Claims of limited kinds on the shared SQL body: count what runs, then claim what fits.

Each limited kind is locked for the claim's transaction (PostgreSQL: an advisory lock;
SQLite's one writer takes turns already), its running jobs counted per limit key, and its
due jobs read in claim order a page at a time, taking each whose kind (or key) has a free
slot, until the batch is full or the kind has no more due jobs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jobtable.adapters.sql.engine import Connection, SqlEngine
from jobtable.core.limits import RunningLimit, smallest

PAGE = 200
"""Due jobs of a keyed kind read at a time while looking for keys with a free slot."""


def claim_limited(
    engine: SqlEngine,
    conn: Connection,
    limits: Mapping[str, RunningLimit],
    picking: Mapping[str, Any],
    wanted: int,
) -> list[Any]:
    """Claim up to ``wanted`` due jobs of the ``limits`` kinds, within their limits, in this
    transaction; the claimed rows (as ``claim_next_job`` returns them), in claim order."""
    chosen: list[str] = []
    for kind in sorted(limits):  # one order for every runner: no two wait for each other
        conn.execute(engine.sql("lock_limited_kind"), {"kind": kind})
    declared = conn.execute(engine.sql("registered_limits"), {}).fetchall()
    limits = smallest(limits, (_parsed(text) for (text,) in declared))
    for kind in sorted(limits):
        if len(chosen) >= wanted:
            break
        chosen += _pick(engine, conn, kind, limits[kind], picking, wanted - len(chosen))
    if not chosen:
        return []
    rows = conn.execute(
        engine.sql("claim_jobs_by_id"), {**picking, "ids": engine.names(chosen)}
    ).fetchall()
    place = {job_id: n for n, job_id in enumerate(chosen)}
    return sorted(rows, key=lambda row: place[row[0]])


def _parsed(text: Any) -> dict[str, int]:
    """A runner's declared limits; none from text no runner of ours wrote."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _pick(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    limit: RunningLimit,
    picking: Mapping[str, Any],
    wanted: int,
) -> list[str]:
    running = dict(conn.execute(engine.sql("running_by_limit_key"), {"kind": kind}).fetchall())
    if not limit.keyed:
        room = min(wanted, limit.n - sum(running.values()))
        if room <= 0:
            return []
        rows = _page(engine, conn, kind, picking, limit=room, offset=0)
        return [row[0] for row in rows]
    picked: list[str] = []
    offset = 0
    while len(picked) < wanted:
        rows = _page(engine, conn, kind, picking, limit=PAGE, offset=offset)
        for job_id, key in rows:
            if running.get(key, 0) < limit.n:
                running[key] = running.get(key, 0) + 1
                picked.append(job_id)
                if len(picked) >= wanted:
                    break
        if len(rows) < PAGE:
            break
        offset += PAGE
    return picked


def _page(
    engine: SqlEngine,
    conn: Connection,
    kind: str,
    picking: Mapping[str, Any],
    *,
    limit: int,
    offset: int,
) -> list[Any]:
    params = {"kind": kind, "queues": picking["queues"], "limit": limit, "offset": offset}
    return list(conn.execute(engine.sql("pick_limited"), params).fetchall())
