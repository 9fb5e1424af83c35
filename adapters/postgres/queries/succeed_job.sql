-- The attempt that finished the job is not logged: the row itself says it (runner,
-- start, end, outcome), and the hot path writes no JSON.
UPDATE jobs
SET status = 'succeeded', result = %(result)s, finished_at = %(now)s, updated_at = %(now)s,
    last_code = NULL, cancel_requested = false,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
