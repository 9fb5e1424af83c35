-- An orphan with attempts left goes back to the queue, keeping its last partial
-- result; fenced, so a job settled meanwhile is left alone.
UPDATE jobs
SET status = 'queued', updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by IS :owner AND attempt = :attempt
