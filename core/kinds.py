"""The kind registry: which handler runs which kind, with what payload, result and codes.

Registration checks everything it can up front (payload type structurable,
result type with a ``public()`` method, codes well formed and not reserved),
so a mistake fails at boot, not at three in the morning on the first job.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import attrs
import cattrs

from jobtable.core import codec
from jobtable.core.codes import InvalidFailureCodeError, validate_declared_codes
from jobtable.core.context import JobContext
from jobtable.core.errors import InvalidPayloadError, RegistrationError, RunnerStateError

P = TypeVar("P")

Handler = Callable[[JobContext, P], Any]
Enqueuer = Callable[["KindSpec", str], str]
"""Stores a queued job of a kind with JSON payload text and returns its id."""


@attrs.frozen(kw_only=True)
class KindSpec:
    """Everything the runner knows about one registered kind."""

    name: str
    handler: Handler[Any]
    payload_type: type
    result_type: type | None
    failure_codes: frozenset[str]
    max_attempts: int = 1
    """How many times a job may be claimed, stored on each job at enqueue: one whose handler
    was interrupted (its runner died or stopped it) with attempts left is queued again."""


class Kind(Generic[P]):
    """The handle ``register`` returns: enqueues jobs of one kind with a typed payload."""

    def __init__(self, spec: KindSpec, converter: cattrs.Converter, enqueuer: Enqueuer) -> None:
        self._spec = spec
        self._converter = converter
        self._enqueuer = enqueuer

    @property
    def name(self) -> str:
        return self._spec.name

    def enqueue(self, payload: P) -> str:
        """Store a queued job with ``payload``, wake one idle worker, and return the job's id."""
        if not isinstance(payload, self._spec.payload_type):
            raise TypeError(
                f"{self._spec.name}: payload must be a {self._spec.payload_type.__name__}"
            )
        try:
            encoded = codec.encode_payload(self._converter, payload)
        except codec.NotStrictJsonError as error:
            raise InvalidPayloadError(self._spec.name, (error.problem,)) from None
        return self._enqueuer(self._spec, encoded)


class KindRegistry:
    """Kinds registered before the runner starts; read-only after."""

    def __init__(self, converter: cattrs.Converter, enqueuer: Enqueuer) -> None:
        self._converter = converter
        self._enqueuer = enqueuer
        self._lock = threading.Lock()
        self._specs: dict[str, KindSpec] = {}
        self._frozen = False

    def register(
        self,
        kind: str,
        handler: Callable[[JobContext, P], Any],
        *,
        payload: type[P],
        failure_codes: Iterable[str] = (),
        result: type | None = None,
        max_attempts: int = 1,
    ) -> Kind[P]:
        """Make ``handler`` run jobs of ``kind`` and return the handle that enqueues them.

        ``payload`` is an attrs class the job's JSON payload is strictly
        decoded into. ``result`` is the handler's result type; when omitted it
        is read from the handler's return annotation. It must have a
        ``public()`` method. ``failure_codes`` are the codes the handler may
        raise with ``Failure``. ``max_attempts`` (default 1) is how many times
        a job may be claimed: when the process running it dies, a job with
        attempts left is queued again instead of failing ``interrupted by
        restart``. Raises RegistrationError for a bad registration and
        RunnerStateError once the runner has started.
        """
        if not isinstance(kind, str) or not kind.strip():
            raise RegistrationError("register: kind must be a non-empty string")
        if handler is None or not callable(handler):
            raise RegistrationError(f"register {kind!r}: handler must be callable")
        self._check_payload_type(kind, payload)
        result_type = result if result is not None else _return_annotation(handler)
        _check_result_type(kind, result_type)
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise RegistrationError(f"register {kind!r}: max_attempts must be a whole number >= 1")
        try:
            codes = validate_declared_codes(failure_codes)
        except InvalidFailureCodeError as error:
            raise RegistrationError(f"register {kind!r}: {error}") from None
        spec = KindSpec(
            name=kind,
            handler=handler,
            payload_type=payload,
            result_type=result_type,
            failure_codes=codes,
            max_attempts=max_attempts,
        )
        with self._lock:
            if self._frozen:
                raise RunnerStateError(f"register {kind!r}: the runner has already started")
            if kind in self._specs:
                raise RegistrationError(f"register {kind!r}: kind already registered")
            self._specs[kind] = spec
        return Kind(spec, self._converter, self._enqueuer)

    def get(self, kind: str) -> KindSpec | None:
        return self._specs.get(kind)

    def names(self) -> list[str]:
        return sorted(self._specs)

    def freeze(self) -> None:
        """Refuse every later registration; the runner calls this as it starts."""
        with self._lock:
            self._frozen = True

    def _check_payload_type(self, kind: str, payload: object) -> None:
        if not (isinstance(payload, type) and attrs.has(payload)):
            raise RegistrationError(f"register {kind!r}: payload must be an attrs class")
        try:
            self._converter.get_structure_hook(payload)
        except Exception as error:
            raise RegistrationError(
                f"register {kind!r}: cattrs cannot structure {payload.__name__}: {error}"
            ) from None


def _return_annotation(handler: Callable[..., Any]) -> type | None:
    try:
        hints = typing.get_type_hints(handler)
    except Exception:
        return None
    annotated = hints.get("return")
    return annotated if isinstance(annotated, type) else None


def _check_result_type(kind: str, result_type: type | None) -> None:
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
