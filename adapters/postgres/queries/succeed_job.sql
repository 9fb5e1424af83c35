UPDATE jobs
SET status = 'succeeded', result = %(result)s, finished_at = %(now)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
