UPDATE jobs
SET status = 'failed', error = %(code)s, finished_at = %(now)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by IS NOT DISTINCT FROM %(owner)s
  AND attempt = %(attempt)s
