-- A job due now is 'queued'; one due later is 'scheduled' (shown as queued). A
-- unique key already held inserts nothing (no row counted): the caller reads the
-- holder. ON CONFLICT never aborts the transaction it is in.
INSERT INTO jobs (
    id, kind, status, payload, created_at, updated_at, max_attempts, queue, priority,
    run_at, retry, timeout, unique_key, unique_while_active, key_until, limit_key,
    rate_key, fair_key, trace_context
)
VALUES (
    :id, :kind, CASE WHEN :run_at > :now THEN 'scheduled' ELSE 'queued' END, :payload,
    :now, :now, :max_attempts, :queue, :priority, :run_at, :retry, :timeout,
    :unique_key, :unique_while_active, :key_until, :limit_key, :rate_key, :fair_key,
    :trace_context
)
ON CONFLICT (kind, unique_key) WHERE {{holds_unique_key}} DO NOTHING
