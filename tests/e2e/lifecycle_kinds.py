"""Kinds for the lifecycle e2e tests: a tick every second, a job that holds until stopped,
and jobs whose handlers record which process ran them (the trust tests' ledger)."""

from __future__ import annotations

import os
from typing import Any

import attrs

from jobtable.core import JobContext
from tests.e2e.trust_kinds import Done, Stopped, Work, record


@attrs.frozen
class Nothing:
    pass


def tick(ctx: JobContext, payload: Nothing) -> Done:
    record("tick", ctx)
    return Done(pid=os.getpid())


def hold(ctx: JobContext, payload: Work) -> Done:
    """Publishes, then waits up to ``ms``; told to stop (a cancel), it gives up."""
    ctx.publish(Done(pid=os.getpid()))
    record("start", ctx)
    if ctx.wait(payload.ms / 1000):
        record("stopped", ctx)
        raise Stopped("told to stop")
    return Done(pid=os.getpid())


def where(ctx: JobContext, payload: Work) -> Done:
    record("ran", ctx)
    return Done(pid=os.getpid())


def register(kinds: Any) -> None:
    tick_kind = kinds.register("tick", tick, payload=Nothing)
    kinds.every(1, tick_kind, Nothing(), name="every second")
    kinds.register("hold", hold, payload=Work, max_attempts=3)
    kinds.register("where", where, payload=Work)
