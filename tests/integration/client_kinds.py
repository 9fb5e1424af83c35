"""Kinds a ``jobtable.Client`` loads by module name, as ``--kinds`` does (its tests')."""

from __future__ import annotations

from typing import Any

from tests.unit.kinds_for_tests import CountPayload, count


def register(kinds: Any) -> Any:
    return kinds.register("count", count, payload=CountPayload)
