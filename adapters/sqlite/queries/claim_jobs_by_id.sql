-- Marks the jobs :ids names running under :runner_id, those still queued and held by no
-- runner (a cancel since the pick wins), and returns what running and settling each needs.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'queued' AND held_by IS NULL
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context
