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


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps`` with these options, without making an encoder on every response."""


def dumps(value: Any) -> str:
    text = _ENCODE(value)
    if (
        "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text
    ):  # searched in C: most bodies hold none, and skip the translation char by char
        return text.translate(_HTML_SAFE)
    return text
