"""The kind ``limits_drain.py`` drains: a no-op, limited as ``JOBTABLE_BENCH_LIMITS`` says.

off: no limit; limit: Limit(64); keyed: Limit(4, key="tenant") over 100 tenants;
rate: Rate(1_000_000, per=60); all: the keyed limit and the rate together; fair:
fair_key="tenant". Every limit is
at least the total number of workers, so it holds nothing back: what is timed is its cost.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from jobtable import JobContext, Limit, Rate


@attrs.frozen
class Work:
    tenant: str


@attrs.frozen
class Done:
    def public(self) -> dict[str, Any]:
        return {}


def work(ctx: JobContext, payload: Work) -> Done:
    return Done()


OPTIONS: dict[str, dict[str, Any]] = {
    "off": {},
    "limit": {"limit": Limit(64)},
    "keyed": {"limit": Limit(4, key="tenant")},
    "rate": {"rate": Rate(1_000_000, per=60)},
    "all": {"limit": Limit(4, key="tenant"), "rate": Rate(1_000_000, per=60)},
    "fair": {"fair_key": "tenant"},
}


def register(kinds: Any) -> Any:
    return kinds.register(
        "work", work, payload=Work, **OPTIONS[os.environ["JOBTABLE_BENCH_LIMITS"]]
    )
