-- A job due now is 'queued'; one due later is 'scheduled' (shown as queued). A
-- unique key already held inserts nothing and returns no row: the caller reads the
-- holder. ON CONFLICT never aborts the transaction it is in.
INSERT INTO jobs (
    id, kind, status, payload, created_at, updated_at, max_attempts, queue, priority,
    run_at, retry, timeout, unique_key, unique_while_active, key_until
)
VALUES (
    %(id)s, %(kind)s,
    CASE WHEN %(run_at)s::timestamptz > %(now)s::timestamptz THEN 'scheduled' ELSE 'queued' END,
    %(payload)s, %(now)s, %(now)s, %(max_attempts)s, %(queue)s, %(priority)s, %(run_at)s,
    %(retry)s, %(timeout)s, %(unique_key)s, %(unique_while_active)s, %(key_until)s
)
ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
RETURNING id
