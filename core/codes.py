"""Failure-code policy: which codes a kind may declare and which one a failed job stores.

A failed job stores a code, never text: codes are chosen by the programmer at
registration, so no secret a handler holds can reach the table through them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

INTERNAL_ERROR = "internal_error"
"""Any other exception, an undeclared code, a payload or result that does not (de)code."""

UNKNOWN_KIND = "unknown_kind"
"""No handler is registered for the job's kind."""

INTERRUPTED = "interrupted by restart"
"""The job was left running by a process that is gone. Not snake case, so no kind can match it."""

CANCELLED = "cancelled"
"""Someone cancelled the job: never retried."""

TIMED_OUT = "timed_out"
"""The job ran past its timeout: retried like an interruption while attempts remain."""

RESERVED_CODES = frozenset({INTERNAL_ERROR, UNKNOWN_KIND, INTERRUPTED, CANCELLED, TIMED_OUT})

_CODE_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")


class InvalidFailureCodeError(ValueError):
    """A kind tried to declare a failure code it may not use."""


def validate_declared_codes(codes: Iterable[str]) -> frozenset[str]:
    """Return the declared codes as a set, refusing malformed and reserved ones.

    The message quotes the code: it comes from the programmer's registration,
    not from a running handler.
    """
    if isinstance(codes, str):
        raise InvalidFailureCodeError("failure_codes must be a list of codes, not one string")
    declared: set[str] = set()
    for code in codes:
        if not isinstance(code, str) or not _CODE_PATTERN.fullmatch(code):
            raise InvalidFailureCodeError(
                f"failure code {code!r} must match ^[a-z][a-z0-9_]{{0,63}}$"
            )
        if code in RESERVED_CODES:
            raise InvalidFailureCodeError(f"failure code {code!r} is reserved for the runner")
        declared.add(code)
    return frozenset(declared)


def stored_code(raised: str, *, declared: frozenset[str]) -> str:
    """The code stored for a handler that raised ``Failure(raised)``."""
    return raised if raised in declared else INTERNAL_ERROR
