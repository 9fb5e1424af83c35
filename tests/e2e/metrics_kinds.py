"""Kinds with one outcome each, for metrics and logs seen from outside: a success, a declared
failure code, and a crash whose exception text holds a secret."""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core import Failure, JobContext

CRASH_SECRET = "crash-sentinel-71c3e9"


@attrs.frozen
class Empty:
    pass


@attrs.frozen
class Done:
    ok: bool = True

    def public(self) -> dict[str, Any]:
        return {"ok": self.ok}


def greet(ctx: JobContext, payload: Empty) -> Done:
    return Done()


def over_quota(ctx: JobContext, payload: Empty) -> Done:
    raise Failure("over_quota")


def crash(ctx: JobContext, payload: Empty) -> Done:
    raise RuntimeError(f"postgresql://app:{CRASH_SECRET}@db.internal refused")


def register(kinds: Any) -> None:
    kinds.register("greet", greet, payload=Empty)
    kinds.register("quota", over_quota, payload=Empty, failure_codes=["over_quota"])
    kinds.register("crash", crash, payload=Empty)
