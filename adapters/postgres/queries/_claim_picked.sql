-- A claim's second half: the rows ``picked`` (locked, in claim order) marked running under
-- :runner_id, and what running and settling each needs. A run_at Python cannot hold
-- (infinity, past year 9999) comes back NULL: that row is set aside. By id (= ANY), not a
-- join: a generic plan cannot tell how many rows ``picked`` holds, and planned the join
-- as a scan of jobs.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = jobs.attempt + 1
WHERE jobs.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempt, jobs.max_attempts, jobs.retry,
    jobs.timeout, jobs.result,
    CASE WHEN jobs.run_at >= '0001-01-02' AND jobs.run_at < '9999-12-30' THEN jobs.run_at END,
    jobs.priority, jobs.queue, jobs.trace_context
