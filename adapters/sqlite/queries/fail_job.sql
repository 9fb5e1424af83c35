-- The last partial result is kept: only status, error and times change.
UPDATE jobs
SET status = 'failed', error = :code, finished_at = :now, updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
