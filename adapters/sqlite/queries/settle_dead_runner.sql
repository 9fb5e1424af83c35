-- Every job running under a dead owner: queued again while its stored attempts
-- last, else failed with :code, keeping its last partial result.
UPDATE jobs
SET status = CASE WHEN attempt < max_attempts THEN 'queued' ELSE 'failed' END,
    error = CASE WHEN attempt < max_attempts THEN NULL ELSE :code END,
    finished_at = CASE WHEN attempt < max_attempts THEN finished_at ELSE :now END,
    updated_at = :now
WHERE status = 'running' AND claimed_by IS :owner
RETURNING status
