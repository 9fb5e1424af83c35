"""``GET /api/v1/jobs``: its query, read strictly, and the opaque cursor between pages.

The cursor is URL-safe base64 of a small JSON object naming the last job of
the page: clients pass it back as they got it and never build one, so its
shape can change without breaking them. A cursor that is not one of ours is
refused rather than guessed at.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

import attrs
import falcon

from jobtable.core.enqueue_options import QUEUE_NAME
from jobtable.core.ids import could_exist
from jobtable.core.jobs import MAX_PAGE
from jobtable.core.text import PLAIN_TEXT, plain
from jobtable.entrypoints.http.errors import api_error

DEFAULT_LIMIT = 50
MAX_CURSOR = 200
"""Characters: a cursor of ours is well under it; a longer one is refused unread."""

_INTEGER = re.compile(r"([+-]?)0*([0-9]+)", re.ASCII)


@attrs.frozen(kw_only=True)
class ListQuery:
    status: str | None = None
    kind: str | None = None
    queue: str | None = None
    limit: int = DEFAULT_LIMIT
    after: str | None = None
    state: str | None = None


def list_query(req: falcon.Request) -> ListQuery:
    """The filters, page size and position a list request asks for; 400 ``invalid_option``
    naming the parameter when one cannot be read. An empty parameter means "any"."""
    kind = _param(req, "kind")
    if kind is not None and not plain(kind):
        raise _refused("kind", f"must be a kind's name ({PLAIN_TEXT})")
    queue = _param(req, "queue")
    if queue is not None and not QUEUE_NAME.fullmatch(queue):
        raise _refused("queue", "must be a queue name (1-64 letters, digits, '_', '.' or '-')")
    limit = _param(req, "limit")
    cursor = _param(req, "cursor")
    return ListQuery(
        status=_param(req, "status"),
        kind=kind,
        queue=queue,
        limit=DEFAULT_LIMIT if limit is None else clamp_limit(limit),
        after=None if cursor is None else decode_cursor(cursor),
        state=_param(req, "state"),
    )


def clamp_limit(text: str) -> int:
    """A whole number clamped to 1..MAX_PAGE (however many digits it has); 400 otherwise."""
    found = _INTEGER.fullmatch(text.strip())
    if found is None:
        raise _refused("limit", f"must be a whole number (clamped to 1..{MAX_PAGE})")
    sign, digits = found.groups()
    if sign == "-":
        return 1
    return MAX_PAGE if len(digits) > len(str(MAX_PAGE)) else max(1, min(MAX_PAGE, int(digits)))


def encode_cursor(after: str | None) -> str | None:
    """The cursor of the page after the one ending with job ``after`` (None: no more pages)."""
    if after is None:
        return None
    text = json.dumps({"after": after}, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(text).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The job id a cursor of ours carries; 400 for anything else."""
    try:
        if len(cursor) > MAX_CURSOR:
            raise ValueError
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.b64decode(padded, altchars=b"-_", validate=True))
        after = decoded["after"]
        if set(decoded) != {"after"} or not could_exist(after):
            raise ValueError
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise _refused("cursor", "is not a cursor this API gave; start again without one") from None
    return after


def _param(req: falcon.Request, name: str) -> str | None:
    value = req.params.get(name)
    if isinstance(value, list):
        raise _refused(name, "give it at most once")
    return value or None


def _refused(name: str, problem: str) -> falcon.HTTPError:
    return api_error(400, "invalid_option", f"{name}: {problem}")
