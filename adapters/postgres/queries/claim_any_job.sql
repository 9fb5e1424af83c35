-- As claim_next_job, for a caller that serves every kind (tests, tools): sorts the
-- due rows instead of probing per kind.
UPDATE jobs
SET status = 'running', started_at = %(now)s, updated_at = %(now)s,
    claimed_by = %(runner_id)s, attempt = attempt + 1
WHERE id = (
    SELECT id FROM jobs
    WHERE status = 'queued'
      AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
    ORDER BY priority, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at
