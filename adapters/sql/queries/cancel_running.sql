-- A running job: its runner sees the request on its next sweep and stops the handler.
UPDATE jobs SET cancel_requested = TRUE, updated_at = :now
WHERE id = :id AND status = 'running'
