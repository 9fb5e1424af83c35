-- As claim_next_job, for a caller that serves every kind (tests, tools).
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN ({{pick_any}})
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context
