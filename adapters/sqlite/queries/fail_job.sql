-- Fail: failed for good. The last partial result is kept; the attempt that ended it is
-- told by the row itself, not logged. A row found running has had at least one attempt:
-- one a tool or an older version wrote with none counts one.
UPDATE jobs
SET status = 'failed', error = :code, last_code = :code, finished_at = :now, updated_at = :now,
    cancel_requested = 0, attempt = max(attempt, 1),
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = :id AND status = 'running' AND claimed_by IS :runner_id AND attempt = :attempt
