-- The attempt that finished the job is not logged: the row itself says it (runner,
-- start, end, outcome), and the hot path writes no JSON.
UPDATE jobs
SET status = 'succeeded', result = :result, finished_at = :now, updated_at = :now,
    last_code = NULL, cancel_requested = 0,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
