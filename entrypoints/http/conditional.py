"""Conditional GETs and long-polls: a job's ETag, ``If-None-Match`` and ``Prefer: wait``.

Pure functions of header values, so every odd spelling a client may send
is tested without a server. A preference that cannot be read is ignored,
as RFC 7240 asks, and the request is answered at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_WAIT = 60
"""The longest ``Prefer: wait`` honoured, in seconds; a longer one is clamped to it."""

_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)


def etag(version: int) -> str:
    """The strong entity-tag of a job at ``version``, quoted as the header carries it."""
    return f'"{version}"'


def none_match(tags: Sequence[str] | None, version: int) -> bool:
    """True when ``If-None-Match`` (falcon's parsed, unquoted tags) names this version.

    Weak comparison, as RFC 9110 asks of If-None-Match: ``W/"3"`` matches
    ``"3"``; ``*`` matches any job that exists.
    """
    if not tags:
        return False
    current = str(version)
    return any(tag == "*" or str(tag) == current for tag in tags)


def wait_preference(header: str | None) -> int | None:
    """The seconds ``Prefer: wait=N`` asks for, clamped to MAX_WAIT; None when it asks none.

    RFC 7240: preferences are comma-separated, names are case-insensitive,
    a value may be quoted, parameters follow after ``;``, and only the
    first ``wait`` counts. A wait that is not delta-seconds is ignored.
    """
    if not header:
        return None
    for preference in header.split(","):
        name, _, value = preference.split(";", 1)[0].partition("=")
        if name.strip().lower() != "wait":
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if not _DELTA_SECONDS.fullmatch(value):
            return None
        # Compared as text first: a long run of digits is just "very long".
        digits = value.lstrip("0") or "0"
        return MAX_WAIT if len(digits) > 2 else min(MAX_WAIT, int(digits))
    return None
