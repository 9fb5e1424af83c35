-- As hold_next_jobs, for a caller that serves every kind.
UPDATE jobs SET held_by = :runner_id
WHERE id IN ({{pick_any}})
RETURNING id, kind, payload, attempt + 1, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context
