-- Ends for good each attempt in :rows (id, runner_id, attempt, status, result, code):
-- 'succeeded' with its result, or 'failed' with its code, keeping its last partial
-- result. Each lands only while its job runs under exactly that claim (a stale worker
-- changes nothing; a row that records no owner is fenced by a NULL runner). The attempt
-- that ended the job is told by the row itself, not logged: the hot path writes no JSON.
-- A row found running has had at least one attempt (one a tool or an older version
-- wrote with none counts one). The job's unique key, if held only while it is active,
-- is let go by the jobs_unique index itself. Returns the ids that ended. Each row is
-- found by its id: coalesce() keeps SQLite's planner from reading every running job by
-- status instead, once per row of the batch.
UPDATE jobs
SET status = ended.status,
    result = CASE WHEN ended.status = 'succeeded' THEN ended.result ELSE jobs.result END,
    error = ended.code, last_code = ended.code, finished_at = :now, updated_at = :now,
    cancel_requested = FALSE,
    attempt = CASE WHEN jobs.attempt < 1 THEN 1 ELSE jobs.attempt END
FROM {{ended_rows}}
WHERE jobs.id = ended.id AND coalesce(jobs.status, '') = 'running'
  AND jobs.attempt = ended.attempt
  AND coalesce(jobs.claimed_by, '') = coalesce(ended.runner_id, '')
RETURNING jobs.id
