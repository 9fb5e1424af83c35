"""What a second deployment serves: only the kind ``elsewhere`` (routing by kind)."""

from __future__ import annotations

from typing import Any

from tests.e2e.lifecycle_kinds import where
from tests.e2e.trust_kinds import Work


def register(kinds: Any) -> None:
    kinds.register("elsewhere", where, payload=Work)
