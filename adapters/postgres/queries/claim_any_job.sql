-- As claim_next_job, for a caller that serves every kind (tests, tools): sorts the
-- due rows instead of probing per kind.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'queued'
      AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
    ORDER BY priority, run_at, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET status = 'running', started_at = %(now)s, updated_at = %(now)s,
    claimed_by = %(runner_id)s, attempt = jobs.attempt + 1
FROM picked WHERE jobs.id = picked.id
RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempt, jobs.max_attempts, jobs.retry,
    jobs.timeout, jobs.result,
    -- NULL for a time Python cannot hold (infinity, past year 9999): that row is set aside
    CASE WHEN jobs.run_at >= '0001-01-02' AND jobs.run_at < '9999-12-30' THEN jobs.run_at END,
    jobs.priority
