-- Failed for good. The last partial result is kept; the attempt that ended it is told
-- by the row itself, not logged.
UPDATE jobs
SET status = 'failed', error = :code, last_code = :code, finished_at = :now, updated_at = :now,
    cancel_requested = 0,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = :id AND status = 'running' AND claimed_by IS :runner_id AND attempt = :attempt
