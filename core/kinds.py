"""The kind registry: which handler runs which kind, with what payload, result and codes.

Registration checks everything it can up front (payload type structurable,
result type with a ``public()`` method, codes well formed and not reserved),
so a mistake fails at boot, not at three in the morning on the first job.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import cattrs

from jobtable.core.batch import Batch
from jobtable.core.codes import InvalidFailureCodeError, validate_declared_codes
from jobtable.core.context import JobContext
from jobtable.core.enqueue_options import (
    InvalidOptionError,
    Unique,
    check_priority,
    check_queue,
    seconds,
)
from jobtable.core.errors import RegistrationError, RunnerStateError
from jobtable.core.jobs import DEFAULT_QUEUE
from jobtable.core.kind_handle import Kind
from jobtable.core.kind_spec import (
    Enqueuer,
    KindSpec,
    P,
    check_result_type,
    check_unique,
    return_annotation,
)
from jobtable.core.limits import (
    FairKey,
    Limit,
    Rate,
    RateLimit,
    RunningLimit,
    check_key,
    check_limit,
    check_rate,
)
from jobtable.core.redaction import check_redact
from jobtable.core.retry import check_policy
from jobtable.core.schedules import Schedule, check_cron, check_every
from jobtable.core.text import PLAIN_TEXT, plain


class KindRegistry:
    """Kinds registered before the runner starts; read-only after."""

    def __init__(self, converter: cattrs.Converter, enqueuer: Enqueuer) -> None:
        self._converter = converter
        self._enqueuer = enqueuer
        self._lock = threading.Lock()
        self._specs: dict[str, KindSpec] = {}
        self._schedules: dict[str, Schedule] = {}
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
        retry_on: Iterable[str] = (),
        backoff: tuple[float, float] | None = None,
        queue: str = DEFAULT_QUEUE,
        priority: int = 0,
        timeout: float | None = None,
        unique: Unique | None = None,
        limit: Limit | None = None,
        rate: Rate | None = None,
        fair_key: FairKey | None = None,
        redact: Iterable[str] = (),
    ) -> Kind[P]:
        """Make ``handler`` run jobs of ``kind`` and return the handle that enqueues them.

        ``payload`` is an attrs class the job's JSON payload is strictly
        decoded into. ``result`` is the handler's result type; when omitted it
        is read from the handler's return annotation. It must have a
        ``public()`` method. ``failure_codes`` are the codes the handler may
        raise with ``Failure``. ``max_attempts`` (default 1) is how many times
        a job may run. A job whose attempt ended with ``internal_error``,
        ``timed_out`` or ``interrupted by restart``, or with a declared code
        listed in ``retry_on``, runs again while attempts remain, after an
        exponential backoff with full jitter (``backoff=(base, cap)``
        seconds, default (2, 600)). ``queue``, ``priority`` (0-9, 0 first)
        and ``timeout`` (seconds an attempt may run) are the defaults each
        job may override; ``unique`` makes jobs unique by key; ``limit``
        bounds how many of its jobs run at once across every runner
        (``Limit(n)``, or per key: ``Limit(n, key="customer_id")``); ``rate``
        bounds how many start in any window (``Rate(10, per=60)``, keyed too);
        ``fair_key`` (a payload field's dotted path, or a callable) has the keys
        take turns, round robin, within each priority. ``redact`` names payload
        fields the detail never shows (``["card.number"]``, shown as ``"***"``). Raises
        RegistrationError for a bad registration and RunnerStateError once
        the runner has started.
        """
        if not plain(kind) or not kind.strip():
            raise RegistrationError(f"register: kind must be a non-empty string of {PLAIN_TEXT}")
        if handler is None or not callable(handler):
            raise RegistrationError(f"register {kind!r}: handler must be callable")
        self._check_payload_type(kind, payload)
        result_type = result if result is not None else return_annotation(handler)
        check_result_type(kind, result_type)
        try:
            codes = validate_declared_codes(failure_codes)
        except InvalidFailureCodeError as error:
            raise RegistrationError(f"register {kind!r}: {error}") from None
        try:
            policy = check_policy(
                max_attempts=max_attempts, retry_on=retry_on, backoff=backoff, declared=codes
            )
            check_queue(queue)
            check_priority(priority)
            if timeout is not None:
                timeout = seconds(timeout, "timeout", allow_zero=False)
            check_unique(unique, payload)
            if limit is not None:
                check_limit(limit, payload)
            if rate is not None:
                check_rate(rate, payload)
            if fair_key is not None:
                check_key(fair_key, payload, "fair key")
            hidden = check_redact(redact, payload)
        except (ValueError, InvalidOptionError) as error:
            raise RegistrationError(f"register {kind!r}: {error}") from None
        spec = KindSpec(
            name=kind,
            handler=handler,
            payload_type=payload,
            result_type=result_type,
            failure_codes=codes,
            policy=policy,
            queue=queue,
            priority=priority,
            timeout=timeout,
            unique=unique,
            limit=limit,
            rate=rate,
            fair_key=fair_key,
            redact=hidden,
        )
        with self._lock:
            if self._frozen:
                raise RunnerStateError(f"register {kind!r}: the runner has already started")
            if kind in self._specs:
                raise RegistrationError(f"register {kind!r}: kind already registered")
            self._specs[kind] = spec
        return Kind(spec, self._converter, self._enqueuer)

    def cron(
        self,
        expr: str,
        handle: Kind[P],
        payload: P,
        *,
        timezone: str | datetime.tzinfo = "UTC",
        name: str | None = None,
    ) -> Schedule:
        """Enqueue ``handle``'s job with ``payload`` at every tick of a five-field cron expression.

        Ticks are read in ``timezone`` (an IANA name or a tzinfo). Each tick
        is enqueued exactly once across every process on the database; see
        core/schedules.py for missed ticks. ``name`` (default: the kind and
        the expression) identifies the schedule in the database: keep it
        when you change the expression to keep its history.
        """
        try:
            expr, zone = check_cron(expr, timezone)
        except ValueError as error:
            raise RegistrationError(f"cron {name or expr!r}: {error}") from None
        return self._add_schedule(
            name or f"{handle.name} {expr}", handle, payload, cron=expr, timezone=zone
        )

    def every(
        self, seconds: float, handle: Kind[P], payload: P, *, name: str | None = None
    ) -> Schedule:
        """Enqueue ``handle``'s job with ``payload`` every ``seconds`` (at multiples of it since
        the Unix epoch, so every process agrees on the ticks)."""
        try:
            every = check_every(seconds)
        except ValueError as error:
            raise RegistrationError(f"every {name or seconds!r}: {error}") from None
        return self._add_schedule(
            name or f"{handle.name} every {every:g}s", handle, payload, every=every
        )

    def _add_schedule(self, name: str, handle: Kind[P], payload: P, **when: Any) -> Schedule:
        if not isinstance(handle, Kind) or self._specs.get(handle.name) is not handle.spec:
            raise RegistrationError(f"schedule {name!r}: register the kind here first")
        encoded = handle.encode_payload(payload)
        try:
            limit_key, rate_key, fair_key = handle.spec.keys(payload)
        except InvalidOptionError as error:
            raise RegistrationError(f"schedule {name!r}: {error}") from None
        schedule = Schedule(
            name=name,
            kind=handle.name,
            payload=encoded,
            limit_key=limit_key,
            rate_key=rate_key,
            fair_key=fair_key,
            **when,
        )
        with self._lock:
            if self._frozen:
                raise RunnerStateError(f"schedule {name!r}: the runner has already started")
            if name in self._schedules:
                raise RegistrationError(f"schedule {name!r}: a schedule has this name already")
            self._schedules[name] = schedule
        return schedule

    def schedules(self) -> list[Schedule]:
        return list(self._schedules.values())

    def get(self, kind: str) -> KindSpec | None:
        return self._specs.get(kind)

    def names(self) -> list[str]:
        return sorted(self._specs)

    def async_names(self) -> list[str]:
        """The kinds whose handlers are ``async def``: async slots run them."""
        return sorted(name for name, spec in self._specs.items() if spec.is_async)

    def claim_rules(self) -> Batch:
        """The limits, rates and fair keys of the kinds registered with them, as every claim
        of this runner carries them (an empty batch)."""
        specs = self._specs.items()
        return Batch(
            limits=self.limits(),
            rates={
                name: RateLimit(n=spec.rate.n, per=float(spec.rate.per), keyed=spec.rate.keyed)
                for name, spec in specs
                if spec.rate is not None
            },
            fair=frozenset(name for name, spec in specs if spec.fair_key is not None),
        )

    def limits(self) -> dict[str, RunningLimit]:
        """The limit of each kind registered with one, as stores honour it when they claim."""
        return {
            name: RunningLimit(n=spec.limit.n, keyed=spec.limit.keyed)
            for name, spec in self._specs.items()
            if spec.limit is not None
        }

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
