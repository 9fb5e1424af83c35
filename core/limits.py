"""Concurrency limits and rates: at most N jobs of a kind running at once, at most N
started in any window, across every runner.

``Limit(n)`` bounds a kind; ``Limit(n, key=...)`` bounds each value of a key
computed from the payload at enqueue (a field's dotted path, or a callable),
stored with the job. ``Rate(n, per=seconds)`` (keyed the same way) bounds the
handler starts in any window of that length. Stores honour both when they
claim (``Batch.limits``, ``Batch.rates``): a job held back stays queued and
spends no attempt.
"""

from __future__ import annotations

import contextlib
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeGuard

import attrs

from jobtable.core.errors import InvalidOptionError

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
        return key_of(self.key, payload, "limit key")


@attrs.frozen
class Rate:
    """At most ``n`` handler starts of the kind in any ``per`` seconds (per value of ``key``
    when given), across every runner."""

    n: int
    per: float = attrs.field(kw_only=True)
    key: str | Callable[[Any], str] | None = attrs.field(default=None, kw_only=True)

    @property
    def keyed(self) -> bool:
        return self.key is not None

    def key_of(self, payload: Any) -> str | None:
        """The rate key stored with a job of this payload, as ``Limit.key_of`` (``rate key``)."""
        return key_of(self.key, payload, "rate key")


FairKey = str | Callable[[Any], str]
"""A key: a payload field's dotted path, or a callable of the payload returning a string."""


def key_of(key: FairKey | None, payload: Any, field: str) -> str | None:
    """The key ``key`` computes from ``payload``; InvalidOptionError naming ``field``."""
    if key is None:
        return None
    value: Any
    if callable(key):
        try:
            value = key(payload)
        except Exception as error:
            raise InvalidOptionError(
                field, f"the key function raised {type(error).__name__}"
            ) from None
        if not isinstance(value, str):
            raise InvalidOptionError(field, "the key function must return a string")
    else:
        value = payload
        for name in key.split("."):
            value = getattr(value, name, None)
        if value is None:
            raise InvalidOptionError(field, f"the payload has no value at {key}")
        value = value if isinstance(value, str) else str(value)
    if not value or len(value) > KEY_LENGTH:
        raise InvalidOptionError(field, f"must be 1-{KEY_LENGTH} characters")
    if "\x00" in value:  # PostgreSQL's text cannot hold it; SQLite's JSON reads cut it off
        raise InvalidOptionError(field, "must not hold a NUL character")
    return str(value)


@attrs.frozen
class RunningLimit:
    """What a store needs to honour a kind's limit when it claims."""

    n: int
    keyed: bool


@attrs.frozen
class RateLimit:
    """What a store needs to honour a kind's rate when it claims."""

    n: int
    per: float
    keyed: bool


@attrs.frozen
class QueueLimit:
    """Limits an operator set on a queue at run time, across every runner: at most
    ``running`` of its jobs running at once, at most ``rate`` started in any window."""

    running: int | None = None
    rate: RateLimit | None = None

    @property
    def empty(self) -> bool:
        return self.running is None and self.rate is None


MAX_QUEUE_LIMIT = 2**31 - 1
"""A queue's running limit and rate n at most (what a database integer holds)."""


def _whole(value: object) -> TypeGuard[int]:
    return not isinstance(value, bool) and isinstance(value, int) and 1 <= value <= MAX_QUEUE_LIMIT


def check_queue_limit(running: object, rate_n: object, rate_per: object) -> QueueLimit:
    """The QueueLimit these ask for; InvalidOptionError naming ``limit`` or ``rate``."""
    whole = f"a whole number from 1 to {MAX_QUEUE_LIMIT}"
    if running is not None and not _whole(running):
        raise InvalidOptionError("limit", f"must be {whole}")
    limit = None if running is None else running
    rate = None
    if rate_n is not None or rate_per is not None:
        if not _whole(rate_n):
            raise InvalidOptionError("rate", f"n must be {whole}")
        if (
            isinstance(rate_per, bool)
            or not isinstance(rate_per, int | float)
            or not 0 < rate_per <= MAX_RATE_WINDOW
        ):
            raise InvalidOptionError(
                "rate", f"per must be seconds above 0 and at most {MAX_RATE_WINDOW:.0f}"
            )
        rate = RateLimit(n=rate_n, per=float(rate_per), keyed=False)
    return QueueLimit(running=limit, rate=rate)


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
    _check_n(limit.n, "limit n")
    check_key(limit.key, payload_type, "limit key")


PRUNE_MARGIN = 60.0
"""Seconds a start is kept past its window: a claim whose clock reading is older (taken
before it waited for the lock, or on a host whose clock lags) must still count it."""

MAX_RATE_WINDOW = 7 * 86400.0
"""Seconds a rate's window may span at most (a week): starts are kept that long."""


def check_rate(rate: object, payload_type: type) -> None:
    """ValueError unless ``rate`` is a Rate with a positive n and window whose key the payload
    has."""
    if not isinstance(rate, Rate):
        raise ValueError("rate must be a Rate(n, per=seconds) or Rate(n, per=..., key=...)")
    _check_n(rate.n, "rate n")
    per = rate.per
    if isinstance(per, bool) or not isinstance(per, int | float) or not 0 < per <= MAX_RATE_WINDOW:
        raise ValueError(f"rate per must be seconds above 0 and at most {MAX_RATE_WINDOW:.0f}")
    check_key(rate.key, payload_type, "rate key")


def _attrs_class(annotation: Any) -> Any:
    """The attrs class an annotation names, itself or in an Optional or a union."""
    if isinstance(annotation, type) and attrs.has(annotation):
        return annotation
    for member in typing.get_args(annotation):
        if isinstance(member, type) and attrs.has(member):
            return member
    return annotation


def _check_n(n: object, what: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what} must be a whole number of 1 or more")


def check_key(key: object, payload_type: type, what: str) -> None:
    """ValueError unless ``key`` is a callable or a dotted path to a field of the payload."""
    if key is None or callable(key):
        return
    if not isinstance(key, str) or not key:
        raise ValueError(f"{what} must be a payload field's dotted path or a callable")
    owner: Any = payload_type
    for name in key.split("."):
        if not (isinstance(owner, type) and attrs.has(owner)):
            raise ValueError(f"{what} field not in the payload: {key}")
        with contextlib.suppress(Exception):  # an annotation naming nothing importable
            attrs.resolve_types(owner)
        fields = attrs.fields_dict(owner)
        if name not in fields:
            raise ValueError(f"{what} field not in the payload: {key}")
        owner = _attrs_class(fields[name].type)
