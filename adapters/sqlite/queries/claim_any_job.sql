-- As claim_next_job, for a caller that serves every kind (tests, tools): sorts the
-- due rows instead of probing per kind.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    SELECT id FROM jobs
    WHERE status = 'queued'
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
    ORDER BY priority, run_at, id LIMIT :limit
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority
