UPDATE jobs
SET status = 'failed', error = :code, finished_at = :now, updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by IS :owner AND attempt = :attempt
