"""A kind's handle: what ``KindRegistry.register`` returns, to enqueue that kind's jobs.

It checks and encodes a typed payload and its options (``enqueue``, ``job``,
``enqueue_many``), then hands the encoded jobs to the client that stores them.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any, Generic

import cattrs

from jobtable.core import codec
from jobtable.core.enqueue_options import EnqueueOptions
from jobtable.core.errors import InvalidPayloadError
from jobtable.core.jobs import Enqueued
from jobtable.core.kind_spec import EncodedJob, Enqueuer, JobRequest, KindSpec, P

_NO_OPTIONS = EnqueueOptions()
"""An enqueue that overrides nothing (frozen, so one serves every such enqueue)."""


class Kind(Generic[P]):
    """The handle ``register`` returns: enqueues jobs of one kind with a typed payload."""

    def __init__(self, spec: KindSpec, converter: cattrs.Converter, enqueuer: Enqueuer) -> None:
        self._spec = spec
        self._payload_type = spec.payload_type
        self._converter = converter
        self._enqueuer = enqueuer

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def spec(self) -> KindSpec:
        return self._spec

    def encode_payload(self, payload: P) -> str:
        """The payload as the JSON text stored for it; TypeError or InvalidPayloadError."""
        return self._encoded(JobRequest(payload)).payload

    def enqueue(
        self,
        payload: P,
        *,
        run_at: datetime.datetime | None = None,
        delay: float | None = None,
        queue: str | None = None,
        priority: int | None = None,
        timeout: float | None = None,
        unique_key: str | None = None,
        connection: Any = None,
    ) -> Enqueued:
        """Store a job with ``payload`` and return its id; wake a worker when it is due.

        ``run_at`` (timezone-aware) or ``delay`` (seconds) schedule it;
        ``queue``, ``priority`` (0 first, 9 last) and ``timeout`` (seconds)
        override the kind's defaults. With ``unique_key`` (or the kind's
        unique fields), a job already holding the key is returned instead,
        its ``duplicate`` set. With ``connection`` (the application's own
        sqlite3 or psycopg connection, in a transaction) the job is written
        in that transaction: it exists once the application commits.
        Raises InvalidPayloadError or InvalidOptionError, storing nothing.
        """
        if (
            run_at is None
            and delay is None
            and queue is None
            and priority is None
            and timeout is None
            and unique_key is None
        ):
            options = _NO_OPTIONS  # the kind's defaults: nothing to make or check
        else:
            options = self.job(
                payload,
                run_at=run_at,
                delay=delay,
                queue=queue,
                priority=priority,
                timeout=timeout,
                unique_key=unique_key,
            ).options
        limit_key, rate_key, fair_key = self._spec.keys(payload)
        job = EncodedJob(
            spec=self._spec,
            payload=self._encode(payload),
            options=options,
            limit_key=limit_key,
            rate_key=rate_key,
            fair_key=fair_key,
        )
        (enqueued,) = self._enqueuer((job,), connection=connection)
        return enqueued

    def job(
        self,
        payload: P,
        *,
        run_at: datetime.datetime | None = None,
        delay: float | None = None,
        queue: str | None = None,
        priority: int | None = None,
        timeout: float | None = None,
        unique_key: str | None = None,
    ) -> JobRequest[P]:
        """One job with options, for ``enqueue_many``."""
        options = EnqueueOptions(
            run_at=run_at,
            delay=delay,
            queue=queue,
            priority=priority,
            timeout=timeout,
            unique_key=unique_key,
        )
        return JobRequest(payload, options.check())

    def enqueue_many(self, jobs: Iterable[P | JobRequest[P]]) -> list[Enqueued]:
        """Store every job in one transaction (all or none), after checking every one.

        Each item is a payload or ``kind.job(payload, ...)`` with options.
        """
        requests = [item if isinstance(item, JobRequest) else JobRequest(item) for item in jobs]
        encoded = [self._encoded(request) for request in requests]
        return self._enqueuer(encoded)

    def _encoded(self, request: JobRequest[P]) -> EncodedJob:
        limit_key, rate_key, fair_key = self._spec.keys(request.payload)
        return EncodedJob(
            spec=self._spec,
            payload=self._encode(request.payload),
            options=request.options,
            limit_key=limit_key,
            rate_key=rate_key,
            fair_key=fair_key,
        )

    def _encode(self, payload: P) -> str:
        """The payload's JSON text, checked: TypeError or InvalidPayloadError."""
        if not isinstance(payload, self._payload_type):
            raise TypeError(
                f"{self._spec.name}: payload must be a {self._spec.payload_type.__name__}"
            )
        try:
            return codec.encode_payload(self._converter, payload)
        except codec.NotStrictJsonError as error:
            raise InvalidPayloadError(self._spec.name, (error.problem,)) from None
