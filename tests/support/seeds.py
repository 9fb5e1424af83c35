"""One seed for a randomized test or soak: printed, so a failure can be run again the same way."""

from __future__ import annotations

import os
import random

SEED_VARIABLE = "JOBTABLE_TEST_SEED"


def chosen_seed(label: str, given: int | None = None) -> int:
    """``given``, else ``JOBTABLE_TEST_SEED``, else a fresh one; printed either way."""
    if given is None:
        from_environment = os.environ.get(SEED_VARIABLE)
        given = int(from_environment) if from_environment else random.randrange(1 << 30)
    print(f"{label}: seed {given} (run it again with {SEED_VARIABLE}={given})", flush=True)
    return given
