"""Turn what a handler did into one decision, before any store call.

The runner decides, the store records: ``run_handler`` runs the handler and
returns a small frozen value; the runner then makes exactly one store call
for it. Nothing here touches the database or quotes an exception's text.
"""

from __future__ import annotations

import datetime
from typing import Any

import attrs

from jobtable.core import codec
from jobtable.core.codes import INTERNAL_ERROR, stored_code
from jobtable.core.context import JobContext
from jobtable.core.errors import Failure, Snooze
from jobtable.core.kinds import KindSpec


@attrs.frozen(kw_only=True)
class Succeed:
    result: str


@attrs.frozen(kw_only=True)
class Fail:
    code: str
    reason: str
    """A fixed phrase for the log, never an exception's text."""
    exception_type: str | None = None


@attrs.frozen(kw_only=True)
class Interrupted:
    """The handler failed because it was told to stop: queued again while attempts last.

    Otherwise it fails ``interrupted by restart``, keeping its last partial
    result, as a job whose runner died does.
    """


@attrs.frozen(kw_only=True)
class Snoozed:
    """The handler asked to run again ``seconds`` from now, without using an attempt."""

    seconds: float


@attrs.frozen(kw_only=True)
class Requeue:
    """Queue the job again, due at ``run_at``, after an attempt that ended with ``code``.

    ``give_back``: the attempt does not count (a snooze).
    """

    run_at: datetime.datetime
    code: str
    give_back: bool = False


Decision = Succeed | Fail | Interrupted | Snoozed
"""What a handler's run came to, before any policy."""

Write = Succeed | Fail | Requeue
"""What a store records for a finished attempt: a ``Fail`` here is final."""


def run_handler(spec: KindSpec, payload_text: str, ctx: JobContext, converter: Any) -> Decision:
    """Decode the payload, run the handler, encode its result, and decide."""
    try:
        payload = codec.decode_payload(converter, payload_text, spec.payload_type)
    except codec.PayloadDecodeError:
        return Fail(code=INTERNAL_ERROR, reason="payload does not decode")
    try:
        result = spec.handler(ctx, payload)
    except Snooze as snooze:
        return Snoozed(seconds=snooze.seconds)
    except BaseException as error:
        # BaseException too: a handler's SystemExit or KeyboardInterrupt must end its
        # job, not the worker thread that runs it.
        if ctx.stopping:
            return Interrupted()
        return _decide_failure(spec, error)
    try:
        return Succeed(result=codec.encode_public(result))
    except codec.ResultEncodeError:
        return Fail(code=INTERNAL_ERROR, reason="result does not encode")
    except BaseException as error:  # a public() raising past Exception: still the job's end
        return Fail(
            code=INTERNAL_ERROR,
            reason="result does not encode",
            exception_type=type(error).__name__,
        )


def _decide_failure(spec: KindSpec, error: BaseException) -> Fail:
    failure = _find_failure(error)
    if failure is None:
        reason = (
            "partial result does not encode"
            if isinstance(error, codec.ResultEncodeError)
            else "handler raised"
        )
        return Fail(code=INTERNAL_ERROR, reason=reason, exception_type=type(error).__name__)
    code = stored_code(failure.code, declared=spec.failure_codes)
    reason = "handler failure" if code != INTERNAL_ERROR else "undeclared failure code"
    return Fail(code=code, reason=reason)


def _find_failure(error: BaseException) -> Failure | None:
    """The Failure raised, or one an exception was explicitly raised ``from``.

    ``raise ApiError(...) from Failure("quota_exceeded")`` wraps a code the
    way Go's ``%w`` does; the wrapper's text is still never kept.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, Failure):
            return current
        seen.add(id(current))
        current = current.__cause__
    return None
