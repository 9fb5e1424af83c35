"""Reading a JSON request body: bounded, strictly parsed, every refusal a clear 4xx.

The size limit is enforced before the body is read whole (a Content-Length
over it is refused at once; without one, reading stops one byte past it).
Nothing here ever echoes a submitted value back.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import falcon

from jobtable.entrypoints.http.errors import api_error

MAX_BODY_BYTES = 64 * 1024
MAX_DEPTH = 64
"""Deeper JSON is refused: handlers, encoders and databases recurse into it."""


def media_type(req: falcon.Request) -> str:
    """The request's media type, without parameters, in lower case ("" when none)."""
    return (req.content_type or "").split(";", 1)[0].strip().lower()


def read_body(req: falcon.Request, *, limit: int = MAX_BODY_BYTES) -> bytes:
    if media_type(req) != falcon.MEDIA_JSON:
        raise api_error(415, "unsupported_media_type", "the body must be application/json")
    return read_bounded(req, limit=limit)


def read_bounded(req: falcon.Request, *, limit: int) -> bytes:
    """The whole body, refused with 413 past ``limit`` bytes before more is read."""
    too_large = api_error(413, "payload_too_large", f"the request body exceeds {limit} bytes")
    if req.content_length is not None and req.content_length > limit:
        raise too_large
    if req.content_length is None and req.env.get("wsgi.input_terminated"):
        # Chunked, with no length: the server marks the input as ending at EOF.
        data: bytes = req.stream.read(limit + 1)
    else:
        data = req.bounded_stream.read(limit + 1)
    if len(data) > limit:
        raise too_large
    return data


class _Refused(ValueError):
    """A value Python's json module would accept but strict JSON does not; fixed text."""


def _refuse_constant(name: str) -> Any:
    raise _Refused("request body holds NaN or Infinity, which JSON does not allow")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Refused("request body has an object with a duplicate key")
    return result


def parse_json(data: bytes, *, shape: str) -> Any:
    """One strict JSON value: UTF-8, no NaN or Infinity, no duplicate keys, no trailing data.

    ``shape`` says what the body should be, for an empty one.
    """
    invalid = "invalid_request"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise api_error(400, invalid, "request body is not valid UTF-8") from None
    if not text.strip():
        raise api_error(400, invalid, shape)
    try:
        return _decoder().decode(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":
            raise api_error(400, invalid, "request body must be a single JSON object") from None
        raise api_error(
            400,
            invalid,
            f"request body is not valid JSON (line {error.lineno} column {error.colno})",
        ) from None
    except RecursionError:
        raise api_error(400, invalid, "request body is nested too deeply") from None
    except _Refused as error:
        raise api_error(400, invalid, str(error)) from None
    except ValueError:  # an integer past Python's 4,300-digit limit
        raise api_error(400, invalid, "request body holds a number with too many digits") from None


_DECODERS = threading.local()


def _decoder() -> json.JSONDecoder:
    """This thread's strict decoder (``json.loads`` would make one a call; one decoder's
    scanner is not shared between threads, as its hook may let another thread in)."""
    try:
        decoder: json.JSONDecoder = _DECODERS.decoder
    except AttributeError:
        decoder = _DECODERS.decoder = json.JSONDecoder(
            parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates
        )
    return decoder


def _too_deep(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(current, dict):
            stack.extend((child, depth + 1) for child in current.values())
        elif isinstance(current, list):
            stack.extend((child, depth + 1) for child in current)
    return False


def parse_json_object(data: bytes, *, shape: str, wrapping: int = 0) -> dict[str, Any]:
    """A strict JSON object no deeper than MAX_DEPTH; ``shape`` is the refusal of anything else.

    ``wrapping``: levels the body adds around what MAX_DEPTH bounds (a batch's
    list and its items), so a job is allowed the same depth alone or in a batch.
    """
    body = parse_json(data, shape=shape)
    limit = MAX_DEPTH + wrapping
    # Past the first, each level is inside a bracket: a body with fewer brackets than the
    # limit is within it, and is not walked.
    if data.count(b"{") + data.count(b"[") >= limit and _too_deep(body, limit):
        raise api_error(400, "invalid_request", "request body is nested too deeply")
    if not isinstance(body, dict):
        raise api_error(400, "invalid_request", shape)
    return body
