"""Kinds that try to leak: a handler whose exception text holds a secret, and markup echoed back."""

from __future__ import annotations

from typing import Any

import attrs

from jobtable.core import JobContext

HANDLER_SECRET = "handler-sentinel-4be1d0"


@attrs.frozen
class Empty:
    pass


@attrs.frozen
class Note:
    text: str


@attrs.frozen
class Echo:
    text: str
    credential: str = HANDLER_SECRET  # held by the handler, never public

    def public(self) -> dict[str, Any]:
        return {"text": self.text}


def leaky(ctx: JobContext, payload: Empty) -> Echo:
    ctx.publish(Echo("working"))
    raise ConnectionError(f"https://svc:{HANDLER_SECRET}@api.example.com refused")


def echo(ctx: JobContext, payload: Note) -> Echo:
    return Echo(payload.text)


def register(kinds: Any) -> None:
    kinds.register("leaky", leaky, payload=Empty)
    kinds.register("echo", echo, payload=Note)
