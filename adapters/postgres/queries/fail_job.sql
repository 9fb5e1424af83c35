-- The last partial result is kept: only status, error and times change.
UPDATE jobs
SET status = 'failed', error = %(code)s, finished_at = %(now)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
