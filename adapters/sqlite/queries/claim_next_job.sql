-- Marks the jobs _pick_next picks running under :runner_id, and returns what running
-- and settling each needs; no row when none is due. One statement claims a whole
-- batch: one transaction, one fsync.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN ({{pick_next}})
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context
