"""Enqueue options as the outside sends them, turned into the core's ``EnqueueOptions``.

HTTP gives JSON values and the CLI strings; both end here, so both refuse
the same input with the same ``field: problem`` words the core uses. What
this adds to the core's own checks (types, ranges, a century at most for a
delay or a timeout) is what only text can get wrong: a time that is not
RFC 3339.
"""

from __future__ import annotations

import datetime
from typing import Any

from jobtable.core.enqueue_options import MAX_SECONDS, EnqueueOptions, InvalidOptionError
from jobtable.entrypoints.times import TimeFormatError, parse_rfc3339

OPTION_FIELDS = ("queue", "priority", "run_at", "delay", "timeout", "unique_key")
"""What a job request may say besides ``kind`` and ``payload``."""

__all__ = ["MAX_SECONDS", "OPTION_FIELDS", "options_from_json"]

_DEFAULTS = EnqueueOptions()


def options_from_json(fields: dict[str, Any]) -> EnqueueOptions:
    """The options among a request's fields; a missing or null one keeps the kind's default.

    Raises InvalidOptionError naming the first unusable field. Types are left
    to the core's checks (a ``"3"`` priority is refused there), except where
    a value must be converted first.
    """
    for name in OPTION_FIELDS:
        if fields.get(name) is not None:
            break
    else:
        return _DEFAULTS  # none given: nothing to make or check
    return EnqueueOptions(
        queue=fields.get("queue"),
        priority=fields.get("priority"),
        run_at=_run_at(fields.get("run_at")),
        delay=fields.get("delay"),
        timeout=fields.get("timeout"),
        unique_key=fields.get("unique_key"),
    ).check(now=datetime.datetime.now(datetime.UTC))


def _run_at(value: Any) -> Any:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except TimeFormatError as error:
        raise InvalidOptionError("run_at", str(error)) from None
