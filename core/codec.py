"""Payload decoding and result encoding: the only way job data crosses into JSON.

Payloads are decoded strictly: unknown keys are refused and a field takes
only a JSON value of its own type (no "3" for an int, no 1 for a bool).
Results are encoded only through their ``public()`` method, so nothing else
a result holds is ever encoded.
"""

from __future__ import annotations

import json
from typing import Any

import cattrs

_COMPACT = (",", ":")


class PayloadDecodeError(ValueError):
    """A payload does not structure into its kind's payload type."""


class ResultEncodeError(ValueError):
    """A result has no public JSON. Carries no text of the result or its error."""


def _strict(expected: type, name: str, *, accept: tuple[type, ...] = ()) -> Any:
    accepted = (expected, *accept)

    def structure(value: Any, _: type) -> Any:
        # bool is an int subclass in Python; JSON keeps them apart, so do we.
        if isinstance(value, bool) and expected is not bool:
            raise TypeError(f"expected {name}")
        if not isinstance(value, accepted):
            raise TypeError(f"expected {name}")
        return expected(value)

    return structure


def make_converter() -> cattrs.Converter:
    """A cattrs converter that refuses unknown keys and coerces no primitive."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(int, _strict(int, "an integer"))
    converter.register_structure_hook(float, _strict(float, "a number", accept=(int,)))
    converter.register_structure_hook(str, _strict(str, "a string"))
    converter.register_structure_hook(bool, _strict(bool, "true or false"))
    return converter


def dumps(value: Any) -> str:
    """Compact JSON text; raises TypeError or ValueError for what JSON cannot hold."""
    return json.dumps(value, separators=_COMPACT, allow_nan=False)


def encode_payload(converter: cattrs.Converter, payload: Any) -> str:
    return dumps(converter.unstructure(payload))


def decode_payload(converter: cattrs.Converter, text: str, payload_type: type) -> Any:
    """Structure stored payload JSON into ``payload_type``; PayloadDecodeError if it does not fit."""
    try:
        return converter.structure(json.loads(text), payload_type)
    except Exception as error:
        raise PayloadDecodeError("payload does not decode") from error


def encode_public(result: Any) -> str:
    """The JSON text of ``result.public()``; ResultEncodeError if there is none.

    The error deliberately drops the cause's text: a result's encoding error
    may quote the secret the result holds.
    """
    public = getattr(result, "public", None)
    if not callable(public):
        raise ResultEncodeError("result has no public() method")
    try:
        return dumps(public())
    except Exception:
        raise ResultEncodeError("result has no valid public JSON") from None
