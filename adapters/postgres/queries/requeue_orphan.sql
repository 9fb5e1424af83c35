UPDATE jobs
SET status = 'queued', updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by IS NOT DISTINCT FROM %(owner)s
  AND attempt = %(attempt)s
