"""Which payload fields are never shown: a kind's ``redact=["card.number", ...]``.

A field path is dotted through the payload's attrs classes, as a limit's key is; where a
path passes a list, each of its items is redacted. The detail, the job page and the CLI
show a redacted field as ``"***"``; the stored payload (the handler's input) is untouched.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import attrs

REDACTED = "***"


def check_redact(paths: Iterable[str], payload_type: type) -> tuple[tuple[str, ...], ...]:
    """The paths as tuples of field names; ValueError naming one the payload does not have."""
    if isinstance(paths, str):
        raise ValueError("redact must be a list of field paths, not one string")
    checked = []
    for path in paths:
        if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
            raise ValueError(f"redact: {path!r} is not a dotted field path such as 'card.number'")
        parts = tuple(path.split("."))
        _check_path(parts, payload_type, path)
        checked.append(parts)
    return tuple(checked)


def _check_path(parts: tuple[str, ...], payload_type: type, path: str) -> None:
    current: Any = payload_type
    for part in parts:
        if not (isinstance(current, type) and attrs.has(current)):
            return  # past the attrs classes (a dict, a list of them): checked when shown
        fields = {field.name: field for field in attrs.fields(current)}
        if part not in fields:
            raise ValueError(f"redact: the payload has no field {path!r}")
        current = fields[part].type


def redacted(value: Any, paths: tuple[tuple[str, ...], ...]) -> Any:
    """``value`` (a decoded payload) with each path's field replaced by ``REDACTED``."""
    for path in paths:
        value = _redact(value, path)
    return value


def _redact(value: Any, path: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_redact(item, path) for item in value]
    if not isinstance(value, dict) or path[0] not in value:
        return value
    head, rest = path[0], path[1:]
    return {**value, head: REDACTED if not rest else _redact(value[head], rest)}


def shown_payload(payload: str | None, kind_redacts: tuple[tuple[str, ...], ...] | None) -> Any:
    """A job's stored payload as a detail shows it, its redacted fields ``"***"``; None when
    it is not shown: ``kind_redacts`` None (its kind is not registered in this process, so
    which fields to hide is not known), or no payload read."""
    if payload is None or kind_redacts is None:
        return None
    try:
        decoded = json.loads(payload)
    except ValueError:
        return None
    return redacted(decoded, kind_redacts)
