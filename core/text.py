"""Text that every store can keep and every log line can show as it is.

A lone surrogate has no UTF-8 form (SQLite and PostgreSQL both refuse it),
PostgreSQL's text refuses NUL, and a newline or another control character
in a logged value can forge a line that reads like another record. So a
name, key or id that comes from outside and reaches a store is checked here
first, the same way from Python, HTTP and the CLI.
"""

from __future__ import annotations

import re
from typing import TypeGuard

MAX_TEXT = 255
PLAIN_TEXT = f"1 to {MAX_TEXT} characters, none of them a control character or a lone surrogate"
"""What ``plain`` takes, as a refusal says it."""

NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""C0 and C1 controls, DEL, the two Unicode line separators, and surrogates."""


def plain(value: object, *, limit: int = MAX_TEXT) -> TypeGuard[str]:
    """Whether ``value`` is a string of 1 to ``limit`` characters that no store refuses
    and no log line needs escaped."""
    return isinstance(value, str) and 0 < len(value) <= limit and not NOT_PLAIN.search(value)
