-- A job whose handler was stopped: queued again while its stored attempts last,
-- else failed with the given code. The last partial result is kept either way.
UPDATE jobs
SET status = CASE WHEN attempt < max_attempts THEN 'queued' ELSE 'failed' END,
    error = CASE WHEN attempt < max_attempts THEN NULL ELSE %(code)s END,
    finished_at = CASE WHEN attempt < max_attempts THEN finished_at ELSE %(now)s END,
    updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
