"""A CPU-bound kind for bench/processes_cpu.py: about 5 ms of pure Python a job."""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core import JobContext


@attrs.frozen
class Burn:
    rounds: int = 60_000


@attrs.frozen
class Burned:
    total: int

    def public(self) -> dict[str, Any]:
        return {"total": self.total}


def burn(ctx: JobContext, payload: Burn) -> Burned:
    total = 0
    for number in range(payload.rounds):
        total = (total + number * number) % 1_000_003
    return Burned(total=total)


def register(kinds: Any) -> None:
    kinds.register("burn", burn, payload=Burn)
