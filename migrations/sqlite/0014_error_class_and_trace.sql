-- 0014_error_class_and_trace: what an attempt's failure was, and where its job came from.
-- error_class: the class path of the exception that ended the job's latest attempt
-- (builtins.ValueError), never its message; an attempt logged in attempts_log carries
-- its own. trace_context: the W3C traceparent and tracestate of the enqueue's `send`
-- span, as JSON, written only when OpenTelemetry is installed; never part of the payload.
ALTER TABLE jobs ADD COLUMN error_class TEXT;
ALTER TABLE jobs ADD COLUMN trace_context TEXT;
