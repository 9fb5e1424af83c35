-- A running job: its runner sees the request on its next sweep and stops the handler. A job
-- already asked is left as it is (a repeat changes nothing).
UPDATE jobs SET cancel_requested = TRUE, updated_at = :now
WHERE id = :id AND status = 'running' AND NOT cancel_requested
