"""The JSON text of every response: compact, and safe to drop into an HTML page by mistake.

``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e`` and ``\\u0026``
(as Go's encoding/json does), so a payload or result holding markup comes
back as data: a browser or a careless dashboard that renders the body as
HTML sees no tag. In JSON text these characters occur only inside strings,
so replacing them everywhere changes no value.
"""

from __future__ import annotations

import json
from typing import Any

_HTML_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_HTML_SAFE)
