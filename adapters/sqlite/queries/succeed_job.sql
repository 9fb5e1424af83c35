UPDATE jobs
SET status = 'succeeded', result = :result, finished_at = :now, updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
