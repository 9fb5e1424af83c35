"""Enqueue options as the outside sends them, turned into the core's ``EnqueueOptions``.

HTTP gives JSON values and the CLI strings; both end here, so both refuse
the same input with the same ``field: problem`` words the core uses. What
this adds to the core's own checks is what only text can get wrong (a time
that is not RFC 3339) and bounds that keep a number from overflowing the
date arithmetic behind it: a ``delay`` of 1e30 seconds is no schedule
anyone means, and would otherwise end as an internal error.
"""

from __future__ import annotations

from typing import Any

from jobtable.core.enqueue_options import EnqueueOptions, InvalidOptionError
from jobtable.entrypoints.times import TimeFormatError, parse_rfc3339

OPTION_FIELDS = ("queue", "priority", "run_at", "delay", "timeout", "unique_key")
"""What a job request may say besides ``kind`` and ``payload``."""

MAX_SECONDS = 100 * 365 * 86400
"""The longest ``delay`` or ``timeout`` accepted: 100 years, far inside the dates a store keeps."""


def options_from_json(fields: dict[str, Any]) -> EnqueueOptions:
    """The options among a request's fields; a missing or null one keeps the kind's default.

    Raises InvalidOptionError naming the first unusable field. Types are left
    to the core's checks (a ``"3"`` priority is refused there), except where
    a value must be converted first.
    """
    return EnqueueOptions(
        queue=fields.get("queue"),
        priority=fields.get("priority"),
        run_at=_run_at(fields.get("run_at")),
        delay=bounded_seconds("delay", fields.get("delay")),
        timeout=bounded_seconds("timeout", fields.get("timeout")),
        unique_key=fields.get("unique_key"),
    ).check()


def _run_at(value: Any) -> Any:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except TimeFormatError as error:
        raise InvalidOptionError("run_at", str(error)) from None


def bounded_seconds(field: str, value: Any) -> Any:
    """A number of seconds no larger than MAX_SECONDS; anything else goes on to the core as is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value  # None keeps the default; any other type is refused by the core
    if value > MAX_SECONDS:
        raise InvalidOptionError(field, f"must be at most {MAX_SECONDS} seconds (100 years)")
    if isinstance(value, int):
        # float() of an integer of 400 digits overflows; any negative one is refused by
        # the core in its own words, so a small negative stands in for it.
        return float(max(value, -1))
    return value
