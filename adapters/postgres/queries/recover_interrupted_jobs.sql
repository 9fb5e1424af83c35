UPDATE jobs
SET status = 'failed', error = %(code)s, finished_at = %(now)s, updated_at = %(now)s
WHERE status = 'running'
