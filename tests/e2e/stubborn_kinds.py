"""Kinds for the end-to-end tests, loaded by ``jobtable serve --kinds tests.e2e.stubborn_kinds``."""

from __future__ import annotations

import threading
from typing import Any

import attrs

from jobtable.core import JobContext


@attrs.frozen
class Empty:
    pass


@attrs.frozen
class Step:
    step: int

    def public(self) -> dict[str, Any]:
        return {"step": self.step}


def stubborn(ctx: JobContext, payload: Empty) -> Step:
    """Publishes once, then ignores the stop signal for an hour."""
    ctx.publish(Step(step=1))
    threading.Event().wait(3600)
    return Step(step=2)


def register(kinds: Any) -> Any:
    return kinds.register("stubborn", stubborn, payload=Empty)
