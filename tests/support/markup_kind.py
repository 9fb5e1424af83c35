"""A kind named with markup that echoes its payload's text as its result: what a page must show
as text (``<script>`` and all), never run or render."""

from __future__ import annotations

import attrs

from jobtable import JobContext

MARKUP_KIND = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"


@attrs.frozen
class Echo:
    text: str


@attrs.frozen
class Echoed:
    text: str

    def public(self):
        return {"text": self.text}


def echo(ctx: JobContext, payload: Echo) -> Echoed:
    return Echoed(text=payload.text)


def register_markup_kind(kinds) -> None:
    kinds.register(MARKUP_KIND, echo, payload=Echo)
