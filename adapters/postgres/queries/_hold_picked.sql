-- A hold's second half: the rows ``picked`` held ahead for :runner_id, still queued; by
-- id, as in _claim_picked.
UPDATE jobs SET held_by = :runner_id
WHERE jobs.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempt + 1, jobs.max_attempts, jobs.retry,
    jobs.timeout, jobs.result,
    CASE WHEN jobs.run_at >= '0001-01-02' AND jobs.run_at < '9999-12-30' THEN jobs.run_at END,
    jobs.priority, jobs.queue, jobs.trace_context
