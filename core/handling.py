"""Run one attempt's handler and say what it ended with, touching no store.

Nothing here quotes an exception's text: a failure is a code, a fixed reason and at
most the exception's type name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any

from jobtable.core import codec
from jobtable.core.codes import INTERNAL_ERROR, stored_code
from jobtable.core.context import JobContext
from jobtable.core.errors import Failure, Snooze
from jobtable.core.kind_spec import KindSpec
from jobtable.core.outcome import AttemptEnd, Raised, Snoozed, Stopped, Succeeded


def run_handler(
    spec: KindSpec,
    payload_text: str,
    ctx: JobContext,
    converter: Any,
    *,
    stop_code: Callable[[], str],
    run_async: Callable[[Coroutine[Any, Any, Any]], Any] | None = None,
) -> AttemptEnd:
    """Decode the payload, run the handler and encode its result: what the attempt ended with.

    ``stop_code`` says why the handler was told to stop, for one that fails once told;
    ``run_async`` runs an ``async def`` handler's coroutine to its end on the runner's
    event loop (core/async_loop.py).
    """
    try:
        payload = codec.decode_payload(converter, payload_text, spec.payload_type)
    except codec.PayloadDecodeError:
        return Raised(code=INTERNAL_ERROR, reason="payload does not decode")
    try:
        result = spec.handler(ctx, payload)
        if inspect.iscoroutine(result):
            if not spec.is_async or run_async is None:
                result.close()  # never awaited: nothing of it ran
                return Raised(code=INTERNAL_ERROR, reason=_COROUTINE_FROM_SYNC)
            result = run_async(result)
    except Snooze as snooze:
        return Snoozed(seconds=snooze.seconds)
    except BaseException as error:
        # BaseException too: a handler's SystemExit or KeyboardInterrupt must end its
        # job, not the worker thread that runs it.
        if ctx.stopping:
            return Stopped(code=stop_code())
        return _failure(spec, error)
    try:
        return Succeeded(result=codec.encode_public(result))
    except codec.ResultEncodeError:
        return Raised(code=INTERNAL_ERROR, reason="result does not encode")
    except BaseException as error:  # a public() raising past Exception: still the job's end
        return Raised(
            code=INTERNAL_ERROR,
            reason="result does not encode",
            exception_type=type(error).__name__,
            error_class=class_path(error),
        )


_COROUTINE_FROM_SYNC = (
    "the handler returned a coroutine: register it as an async def function (or a callable "
    "whose __call__ is async def) so the runner awaits it"
)


def _failure(spec: KindSpec, error: BaseException) -> Raised:
    failure = _find_failure(error)
    if failure is None:
        reason = (
            "partial result does not encode"
            if isinstance(error, codec.ResultEncodeError)
            else "handler raised"
        )
        return Raised(
            code=INTERNAL_ERROR,
            reason=reason,
            exception_type=type(error).__name__,
            error_class=class_path(error),
        )
    code = stored_code(failure.code, declared=spec.failure_codes)
    reason = "handler failure" if code != INTERNAL_ERROR else "undeclared failure code"
    return Raised(code=code, reason=reason)


def class_path(error: BaseException) -> str:
    """The exception's class as a dotted path (``builtins.ValueError``), never its message."""
    kind = type(error)
    return f"{kind.__module__}.{kind.__qualname__}"


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
