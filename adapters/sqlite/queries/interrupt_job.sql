-- A job whose handler was stopped: queued again while its stored attempts last,
-- else failed with :code. The last partial result is kept either way.
UPDATE jobs
SET status = CASE WHEN attempt < max_attempts THEN 'queued' ELSE 'failed' END,
    error = CASE WHEN attempt < max_attempts THEN NULL ELSE :code END,
    finished_at = CASE WHEN attempt < max_attempts THEN finished_at ELSE :now END,
    updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
