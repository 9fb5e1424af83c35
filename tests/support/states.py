"""A queue's ``states`` counts as the API gives them: every state named, most of them 0."""

from __future__ import annotations

from jobtable.core.states import STATES


def states(**counted: int) -> dict[str, int]:
    return {state: counted.get(state, 0) for state in STATES}
