"""Falcon middleware: an enqueue over HTTP continues the caller's trace.

An incoming W3C ``traceparent`` header (with its ``tracestate``) is made current
for the request, so the ``send`` span of each job it enqueues is the caller's
span's child; a malformed one is ignored and the enqueue starts a new trace, as
W3C Trace Context says. Installed only when tracing is on (core/tracing.py).
"""

from __future__ import annotations

from collections.abc import Callable

import falcon

from jobtable.core.tracing import Tracing

_HEADERS = ("traceparent", "tracestate")


class IncomingTraceContext:
    """Make each request's ``traceparent`` current while it is handled."""

    def __init__(self, tracing: Tracing) -> None:
        self._tracing = tracing

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        parent = req.get_header("traceparent")
        if parent is None:
            return
        headers = {"traceparent": parent}
        state = req.get_header("tracestate")
        if state is not None:
            headers["tracestate"] = state
        req.context.leave_trace = self._tracing.incoming(headers)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        leave: Callable[[], None] | None = req.context.get("leave_trace")
        if leave is not None:
            leave()
