"""Payload decoding and result encoding: the only way job data crosses into JSON.

Payloads are decoded strictly: unknown keys are refused and a field takes
only a JSON value of its own type (no "3" for an int, no 1 for a bool).
Results are encoded only through their ``public()`` method, so nothing else
a result holds is ever encoded.
"""

from __future__ import annotations

import json
import math
from typing import Any

import cattrs
from cattrs.cols import homogenous_tuple_structure_factory, is_sequence, list_structure_factory

_COMPACT = (",", ":")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class PayloadDecodeError(ValueError):
    """A payload does not structure into its kind's payload type.

    ``problems`` name each offending field path and what was expected; they
    never quote a submitted value.
    """

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class _Expected(TypeError):
    """Raised by the strict hooks; its text is fixed, never the value."""


class ResultEncodeError(ValueError):
    """A result has no public JSON. Carries no text of the result or its error."""


def _strict(expected: type, name: str, *, accept: tuple[type, ...] = ()) -> Any:
    accepted = (expected, *accept)

    def structure(value: Any, _: type) -> Any:
        # bool is an int subclass in Python; JSON keeps them apart, so do we.
        if isinstance(value, bool) and expected is not bool:
            raise _Expected(f"expected {name}")
        if not isinstance(value, accepted):
            raise _Expected(f"expected {name}")
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            # Beyond 64 bits a number does not survive most JSON readers.
            raise _Expected(f"expected {name} between -2^63 and 2^63-1")
        if isinstance(value, float) and not math.isfinite(value):
            # NaN and infinity have no JSON form: they could never be stored.
            raise _Expected(f"expected {name}, not NaN or infinity")
        return expected(value)

    return structure


def _strict_list(type_: Any, converter: cattrs.Converter) -> Any:
    """A list field takes only a JSON array: cattrs alone would make ["a", "b"] of "ab"."""
    origin = getattr(type_, "__origin__", type_)
    if origin is tuple:
        inner = homogenous_tuple_structure_factory(type_, converter)
    else:
        inner = list_structure_factory(type_, converter)

    def structure(value: Any, target: Any) -> Any:
        if not isinstance(value, list):
            raise _Expected("expected a list")
        return inner(value, target)

    return structure


def _is_list_like(type_: Any) -> bool:
    origin = getattr(type_, "__origin__", type_)
    if origin is tuple:
        args: tuple[Any, ...] = tuple(getattr(type_, "__args__", ()))
        return args[1:] == (Ellipsis,)
    return bool(is_sequence(type_)) and origin not in (str, bytes)


def make_converter() -> cattrs.Converter:
    """A cattrs converter that refuses unknown keys and coerces no primitive."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(int, _strict(int, "an integer"))
    converter.register_structure_hook(float, _strict(float, "a number", accept=(int,)))
    converter.register_structure_hook(str, _strict(str, "a string"))
    converter.register_structure_hook(bool, _strict(bool, "true or false"))
    converter.register_structure_hook_factory(_is_list_like, _strict_list)
    return converter


class NotStrictJsonError(ValueError):
    """A value with no strict JSON form; ``problem`` names where and what, never the value."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def dumps(value: Any) -> str:
    """Compact JSON text that every reader takes back as the same value.

    Strict, so what is stored can always be served: objects have string keys
    only (``{1: "a", "1": "b"}`` would silently lose one), integers fit in 64
    bits, no NaN or infinity, and text is valid Unicode (a lone surrogate, as
    a filename read from a non-UTF-8 folder holds, cannot be sent as UTF-8).
    Raises NotStrictJsonError naming the offending path.
    """
    _check_strict(value)
    try:
        text = _ENCODE(value)
    except (TypeError, ValueError):
        raise NotStrictJsonError(_first_problem(value)) from None
    if not text.isascii():  # ASCII is valid UTF-8: only other text can hold a lone surrogate
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise NotStrictJsonError(_first_problem(value)) from None
    return text


_ENCODE = json.JSONEncoder(separators=_COMPACT, allow_nan=False, ensure_ascii=False).encode
"""``json.dumps`` with these options, without making an encoder on every call."""


_SCALARS = (str, float, bool, type(None))


def _check_strict(value: Any) -> None:
    """Refuse non-string keys and integers past 64 bits; cheap, without building paths."""
    pending = [value]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind is dict:
            for key in current:
                if type(key) is not str:
                    raise NotStrictJsonError(_first_problem(value))
            pending.extend(current.values())
        elif kind is list or kind is tuple:
            pending.extend(current)
        elif kind is int and not INT64_MIN <= current <= INT64_MAX:
            raise NotStrictJsonError(_first_problem(value))


def _first_problem(value: Any) -> str:
    """Where ``value`` first fails strict JSON, as ``what @ path``: built only on failure."""
    pending: list[tuple[Any, str]] = [(value, "$")]
    while pending:
        current, path = pending.pop()
        if isinstance(current, dict):
            for key, item in current.items():
                if not isinstance(key, str):
                    return f"expected string keys only @ {path}"
                pending.append((item, f"{path}.{key[:64]}"))
        elif isinstance(current, list | tuple):
            pending.extend((item, f"{path}[{index}]") for index, item in enumerate(current))
        elif isinstance(current, bool) or current is None:
            continue
        elif isinstance(current, int):
            if not INT64_MIN <= current <= INT64_MAX:
                return f"expected an integer between -2^63 and 2^63-1 @ {path}"
        elif isinstance(current, float):
            if not math.isfinite(current):
                return f"expected a number, not NaN or infinity @ {path}"
        elif isinstance(current, str):
            try:
                current.encode("utf-8")
            except UnicodeEncodeError:
                return f"expected valid Unicode text, not a lone surrogate @ {path}"
        else:
            return f"expected JSON values only @ {path}"
    return "expected JSON values only @ $"


def encode_payload(converter: cattrs.Converter, payload: Any) -> str:
    """The payload's JSON text; NotStrictJsonError when it has no strict JSON form."""
    return dumps(converter.unstructure(payload))


def decode_payload(converter: cattrs.Converter, text: str, payload_type: type) -> Any:
    """Structure stored payload JSON into ``payload_type``; PayloadDecodeError if it does not fit."""
    try:
        value = json.loads(text)
    except Exception as error:
        raise PayloadDecodeError("payload is not JSON") from error
    return structure_payload(converter, value, payload_type)


def structure_payload(converter: cattrs.Converter, value: Any, payload_type: type) -> Any:
    """Structure a decoded JSON value into ``payload_type``, or say every way it does not fit."""
    try:
        return converter.structure(value, payload_type)
    except Exception as error:
        problems = tuple(cattrs.transform_error(error, path="$", format_exception=_describe))
        raise PayloadDecodeError("payload does not match the job kind", problems) from None


_EXPECTED_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _describe(error: BaseException, type_: Any) -> str:
    """What was expected at one path; built from the type, never from the submitted value."""
    if isinstance(error, _Expected):
        return str(error)
    if isinstance(error, cattrs.ForbiddenExtraKeysError):
        names = ", ".join(repr(str(key)[:64]) for key in sorted(map(str, error.extra_fields)))
        return f"unknown field {names}"
    if isinstance(error, KeyError):
        return "required field missing"
    if type_ in _EXPECTED_NAMES:
        return f"expected {_EXPECTED_NAMES[type_]}"
    origin = getattr(type_, "__origin__", type_)
    if origin in (list, tuple, set, frozenset):
        return "expected a list"
    return "expected an object"


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
        # Not the cause's text: it may quote what the result holds.
        raise ResultEncodeError("result has no valid public JSON") from None
