"""What a registered kind is, the checks its registration makes, and a job of it checked
and encoded for the store.

``KindSpec`` is everything the runner knows about one kind (core/kinds.py registers
them); ``EncodedJob`` is one job of it, ready to be stored; ``JobRequest`` one job with
options for ``enqueue_many``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

import attrs

from jobtable.core.context import JobContext
from jobtable.core.enqueue_options import EnqueueOptions, Unique, seconds
from jobtable.core.errors import RegistrationError
from jobtable.core.jobs import DEFAULT_QUEUE, Enqueued
from jobtable.core.limits import FairKey, Limit, Rate, key_of
from jobtable.core.policies import RetryPolicy

P = TypeVar("P")

Handler = Callable[[JobContext, P], Any]


class Enqueuer(Protocol):
    """Stores jobs of registered kinds (the runner): one, many in one transaction, or one on
    the application's own connection."""

    def __call__(
        self, requests: Sequence[EncodedJob], *, connection: Any = None
    ) -> list[Enqueued]: ...


@attrs.frozen(kw_only=True)
class KindSpec:
    """Everything the runner knows about one registered kind."""

    name: str
    handler: Handler[Any]
    payload_type: type
    result_type: type | None
    failure_codes: frozenset[str]
    policy: RetryPolicy = attrs.Factory(RetryPolicy)
    """Attempts, retryable codes and backoff: stored on each job at enqueue."""
    queue: str = DEFAULT_QUEUE
    priority: int = 0
    timeout: float | None = None
    unique: Unique | None = None
    limit: Limit | None = None
    """At most this many of its jobs running at once, across every runner (core/limits.py)."""
    rate: Rate | None = None
    """At most this many of its jobs started in any window, across every runner."""

    fair_key: FairKey | None = None
    redact: tuple[tuple[str, ...], ...] = ()
    """Payload field paths never shown (core/redaction.py)."""
    """Its jobs take turns by this key within a priority, across every runner."""
    is_async: bool = attrs.field(init=False)
    """Its handler is ``async def``: it runs on the runner's event loop, in an async slot."""

    @is_async.default
    def _handler_is_async(self) -> bool:
        return is_async_handler(self.handler)

    def keys(self, payload: Any) -> tuple[str | None, str | None, str | None]:
        """The limit, rate and fair keys of a job with ``payload`` (InvalidOptionError)."""
        limit_key = None if self.limit is None else self.limit.key_of(payload)
        rate_key = None if self.rate is None else self.rate.key_of(payload)
        fair = self.fair_key
        return limit_key, rate_key, None if fair is None else key_of(fair, payload, "fair key")


@attrs.frozen(kw_only=True)
class EncodedJob:
    """A job checked and encoded, about to be stored: its kind, payload JSON and options."""

    spec: KindSpec
    payload: str
    options: EnqueueOptions
    limit_key: str | None = None
    """The key of the kind's keyed limit, computed from the payload."""
    rate_key: str | None = None
    """The key of the kind's keyed rate, computed from the payload."""
    fair_key: str | None = None
    """The key its kind's jobs take turns by, computed from the payload."""


@attrs.frozen
class JobRequest(Generic[P]):
    """One job for ``enqueue_many``: a payload and its options (``Kind.job`` makes one)."""

    payload: P
    options: EnqueueOptions = attrs.Factory(EnqueueOptions)


def check_unique(unique: object, payload: type) -> None:
    """ValueError unless ``unique`` is a Unique whose fields the payload has."""
    if unique is None:
        return
    if not isinstance(unique, Unique):
        raise ValueError("unique must be a Unique(fields=..., period=...)")
    names = {field.name for field in attrs.fields(payload)}
    unknown = sorted(set(unique.fields) - names)
    if unknown:
        raise ValueError(f"unique fields not in the payload: {unknown}")
    if unique.period is not None:
        seconds(unique.period, "unique period", allow_zero=False)


def is_async_handler(handler: Callable[..., Any]) -> bool:
    """Whether calling ``handler`` makes a coroutine: an ``async def`` function (through
    ``functools.partial`` too) or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(handler):
        return True
    if inspect.isfunction(handler) or inspect.ismethod(handler):
        return False
    return inspect.iscoroutinefunction(type(handler).__call__)


def return_annotation(handler: Callable[..., Any]) -> type | None:
    """The handler's return annotation, when it names a type."""
    try:
        hints = typing.get_type_hints(handler)
    except Exception:
        return None
    annotated = hints.get("return")
    return annotated if isinstance(annotated, type) else None


def check_result_type(kind: str, result_type: type | None) -> None:
    """RegistrationError unless the result type is stated and has ``public()``."""
    if result_type is None:
        raise RegistrationError(
            f"register {kind!r}: state the result type, as the handler's return "
            "annotation or with result="
        )
    if not callable(getattr(result_type, "public", None)):
        raise RegistrationError(
            f"register {kind!r}: result type {result_type.__name__} has no public() method "
            "returning the JSON value to store"
        )
