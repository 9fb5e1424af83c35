"""Concurrency limits: at most N jobs of a kind running at once, across every runner.

``Limit(n)`` bounds a kind; ``Limit(n, key=...)`` bounds each value of a key
computed from the payload at enqueue (a field's dotted path, or a callable),
stored with the job. Stores honour them when they claim (``Batch.limits``):
a job held back stays queued and spends no attempt.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from jobtable.core.enqueue_options import InvalidOptionError

KEY_LENGTH = 255
"""Characters a computed key may have at most."""


@attrs.frozen
class Limit:
    """At most ``n`` jobs of the kind running at once (per value of ``key`` when given)."""

    n: int
    key: str | Callable[[Any], str] | None = attrs.field(default=None, kw_only=True)

    @property
    def keyed(self) -> bool:
        return self.key is not None

    def key_of(self, payload: Any) -> str | None:
        """The key stored with a job of this payload (None for a limit without one).

        Raises InvalidOptionError naming ``limit key`` when the field holds no
        value or the callable raises or returns no non-empty string.
        """
        if self.key is None:
            return None
        value: Any
        if callable(self.key):
            try:
                value = self.key(payload)
            except Exception as error:
                raise InvalidOptionError(
                    "limit key", f"the key function raised {type(error).__name__}"
                ) from None
            if not isinstance(value, str):
                raise InvalidOptionError("limit key", "the key function must return a string")
        else:
            value = payload
            for name in self.key.split("."):
                value = getattr(value, name, None)
            if value is None:
                raise InvalidOptionError("limit key", f"the payload has no value at {self.key}")
            value = value if isinstance(value, str) else str(value)
        if not value or len(value) > KEY_LENGTH:
            raise InvalidOptionError("limit key", f"must be 1-{KEY_LENGTH} characters")
        return str(value)


@attrs.frozen
class RunningLimit:
    """What a store needs to honour a kind's limit when it claims."""

    n: int
    keyed: bool


def smallest(
    own: Mapping[str, RunningLimit], registered: Iterable[Mapping[str, int]]
) -> dict[str, RunningLimit]:
    """``own`` limits, each lowered to the smallest n any registered runner declared for its
    kind (a rolling deploy: the lowest limit holds from its first runner)."""
    lowest = dict(own)
    for limits in registered:
        for kind, n in limits.items():
            mine = lowest.get(kind)
            if mine is not None and isinstance(n, int) and 0 < n < mine.n:
                lowest[kind] = RunningLimit(n=n, keyed=mine.keyed)
    return lowest


def check_limit(limit: object, payload_type: type) -> None:
    """ValueError unless ``limit`` is a Limit with a positive n whose key the payload has."""
    if not isinstance(limit, Limit):
        raise ValueError("limit must be a Limit(n) or Limit(n, key=...)")
    if isinstance(limit.n, bool) or not isinstance(limit.n, int) or limit.n < 1:
        raise ValueError("limit n must be a whole number of 1 or more")
    key = limit.key
    if key is None or callable(key):
        return
    if not isinstance(key, str) or not key:
        raise ValueError("limit key must be a payload field's dotted path or a callable")
    owner: Any = payload_type
    for name in key.split("."):
        if not (isinstance(owner, type) and attrs.has(owner)):
            raise ValueError(f"limit key field not in the payload: {key}")
        with contextlib.suppress(Exception):  # an annotation naming nothing importable
            attrs.resolve_types(owner)
        fields = attrs.fields_dict(owner)
        if name not in fields:
            raise ValueError(f"limit key field not in the payload: {key}")
        owner = fields[name].type
