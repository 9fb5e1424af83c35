"""HTML built from values, escaped unless marked as markup: the dashboard's only way to write a page.

Every string that is not ``Markup`` is escaped, text and attribute values
alike, so a job's result, a kind, a queue or a runner's host can never become
a tag or an attribute. Only the builders here make ``Markup``; nothing takes a
string from outside and marks it trusted.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*")  # SVG names keep their case (viewBox)
_VOID = frozenset({"input", "meta", "link", "br", "img"})


class Markup(str):
    """Text that is already HTML (made here, from escaped parts)."""


def escape(value: object) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def _children(children: Iterable[object]) -> str:
    parts: list[str] = []
    for child in children:
        if child is None or child is False:
            continue
        if isinstance(child, str | int | float):
            parts.append(escape(child))
        else:
            parts.append(_children(child))  # type: ignore[arg-type]
    return "".join(parts)


def _attribute(name: str, value: object) -> str:
    name = name.rstrip("_").replace("_", "-")  # class_ -> class, data_job_id -> data-job-id
    if not _NAME.fullmatch(name):
        raise ValueError(f"not an attribute name: {name!r}")
    if value is True:
        return f" {name}"
    return f' {name}="{escape(value)}"'


def el(tag: str, *children: object, **attributes: object) -> Markup:
    """``<tag attributes>children</tag>``; attributes that are None or False are left out."""
    if not _NAME.fullmatch(tag):
        raise ValueError(f"not a tag name: {tag!r}")
    attrs = "".join(
        _attribute(name, value)
        for name, value in attributes.items()
        if value is not None and value is not False
    )
    if tag in _VOID:
        return Markup(f"<{tag}{attrs}>")
    return Markup(f"<{tag}{attrs}>{_children(children)}</{tag}>")


def fragment(*children: object) -> Markup:
    """Children side by side, with no element around them."""
    return Markup(_children(children))
