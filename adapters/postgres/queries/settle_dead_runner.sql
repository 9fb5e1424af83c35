-- Every job running under a dead owner: queued again while its stored attempts
-- last, else failed with the given code, keeping its last partial result.
UPDATE jobs
SET status = CASE WHEN attempt < max_attempts THEN 'queued' ELSE 'failed' END,
    error = CASE WHEN attempt < max_attempts THEN NULL ELSE %(code)s END,
    finished_at = CASE WHEN attempt < max_attempts THEN finished_at ELSE %(now)s END,
    updated_at = %(now)s
WHERE status = 'running' AND claimed_by IS NOT DISTINCT FROM %(owner)s
RETURNING status
