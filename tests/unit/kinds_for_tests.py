"""Payload and result types the runner tests share, with memorable data."""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core import Failure, JobContext

SENTINEL_SECRET = "sk-sentinel-5f2c9a"
"""Stands in for a credential a handler holds while it runs."""


@attrs.frozen
class CountPayload:
    steps: int = 0


@attrs.frozen
class CountResult:
    done: int

    def public(self) -> dict[str, Any]:
        return {"done": self.done}


def count(ctx: JobContext, payload: CountPayload) -> CountResult:
    """The plainest handler: succeeds with as many steps as it was given."""
    return CountResult(done=payload.steps)


def over_quota(ctx: JobContext, payload: CountPayload) -> CountResult:
    raise Failure("over_quota")


def crash(ctx: JobContext, payload: CountPayload) -> CountResult:
    raise ConnectionError(f"https://user:{SENTINEL_SECRET}@db.example.com refused")


def register_outcomes(kinds: Any, **crash_options: Any) -> tuple[Any, Any, Any]:
    """Three kinds, one outcome each: ``count`` succeeds, ``quota`` fails with its declared
    ``over_quota``, ``crash`` fails ``internal_error`` (its exception text holds the sentinel)."""
    return (
        kinds.register("count", count, payload=CountPayload),
        kinds.register("quota", over_quota, payload=CountPayload, failure_codes=["over_quota"]),
        kinds.register("crash", crash, payload=CountPayload, **crash_options),
    )


@attrs.frozen
class Credential:
    value: str

    def __repr__(self) -> str:
        return "Credential([REDACTED])"


@attrs.frozen
class LeakyResult:
    """Holds a secret in several fields; only ``dinners`` is public."""

    dinners: list[str]
    key: Credential = Credential(SENTINEL_SECRET)
    token: str = SENTINEL_SECRET
    _api_key: str = SENTINEL_SECRET

    def public(self) -> dict[str, Any]:
        return {"dinners": self.dinners}


class BadResult:
    """Has no valid public JSON; its encoding error quotes a secret."""

    def public(self) -> Any:
        raise ValueError(f"encode with key {SENTINEL_SECRET}")


class NotJsonResult:
    """Its public value is not JSON: a set."""

    def public(self) -> Any:
        return {SENTINEL_SECRET}
