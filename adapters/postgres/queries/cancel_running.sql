-- A running job: its runner sees the request on its next sweep and stops the handler.
UPDATE jobs SET cancel_requested = true, updated_at = %(now)s
WHERE id = %(id)s AND status = 'running'
