"""Times and durations as people and clients write them: RFC 3339 instants, ``30s``-style spans.

HTTP and the CLI read and write times the same way, so a ``run_at`` a client
sends comes back in the job's detail in a form it can compare. A time without
an offset is refused rather than guessed: a server's local zone is not the
client's.
"""

from __future__ import annotations

import datetime
import re

RFC3339_EXAMPLE = "2030-01-02T03:04:05Z"
RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})",
    re.ASCII,
)
NAIVE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?", re.ASCII)

DURATION = re.compile(r"(\d{1,15}(?:\.\d{1,9})?)([smhd]?)", re.ASCII)
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION_EXAMPLES = "30s, 5m, 2h, 1d or plain seconds"


class TimeFormatError(ValueError):
    """Text that is not the time or duration asked for; the message never quotes it."""


def parse_rfc3339(text: str) -> datetime.datetime:
    """An aware datetime in UTC from RFC 3339 text with an offset (``Z`` or ``+hh:mm``)."""
    if not isinstance(text, str) or not RFC3339.fullmatch(text):
        if isinstance(text, str) and NAIVE.fullmatch(text):
            raise TimeFormatError(
                f"has no offset; say which zone, e.g. {RFC3339_EXAMPLE} or +02:00 at the end"
            )
        raise TimeFormatError(f"must be an RFC 3339 time with an offset, e.g. {RFC3339_EXAMPLE}")
    try:
        # fromisoformat reads at most 6 fractional digits and wants upper case.
        normal = re.sub(r"(\.\d{6})\d+", r"\1", text.upper().replace(" ", "T"))
        return datetime.datetime.fromisoformat(normal).astimezone(datetime.UTC)
    except ValueError:
        raise TimeFormatError(
            f"is not a valid date and time; give one like {RFC3339_EXAMPLE}"
        ) from None
    except OverflowError:  # a valid date that leaves years 1-9999 once moved to UTC
        raise TimeFormatError("is outside the years 1 to 9999 in UTC") from None


def format_time(value: datetime.datetime | None) -> str | None:
    """RFC 3339 in UTC (``+00:00``, as the detail's ``waiting`` sentences write it), or None."""
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat()


def parse_duration(text: str) -> float:
    """Seconds from ``30s``, ``5m``, ``2h``, ``1d`` or plain (possibly fractional) seconds."""
    match = DURATION.fullmatch(text.strip().lower()) if isinstance(text, str) else None
    if match is None:
        raise TimeFormatError(f"must be a duration: {DURATION_EXAMPLES}")
    number, unit = match.groups()
    return float(number) * UNIT_SECONDS[unit]
