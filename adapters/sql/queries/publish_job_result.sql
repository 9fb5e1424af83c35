-- Stores a partial result, only while the job runs under this exact claim.
UPDATE jobs
SET result = :result, updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
