"""The built-in kind ``noop``: does nothing and succeeds with ``{"ok": true}``.

A noop job reaching succeeded proves the runner claims, runs and records
jobs, which makes it the startup and readiness check.
"""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core.context import JobContext
from jobtable.core.kind_handle import Kind
from jobtable.core.kinds import KindRegistry

NOOP = "noop"


@attrs.frozen
class NoopPayload:
    """A noop job takes ``{}``."""


@attrs.frozen
class NoopResult:
    def public(self) -> dict[str, Any]:
        return {"ok": True}


def run_noop(ctx: JobContext, payload: NoopPayload) -> NoopResult:
    return NoopResult()


@attrs.frozen(kw_only=True)
class Builtins:
    """Handles of the built-in kinds."""

    noop: Kind[NoopPayload]


def register_builtins(kinds: KindRegistry) -> Builtins:
    return Builtins(noop=kinds.register(NOOP, run_noop, payload=NoopPayload))
