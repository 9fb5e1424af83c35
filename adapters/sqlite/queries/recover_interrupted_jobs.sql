-- Fails every job left running, keeping its last partial result.
UPDATE jobs
SET status = 'failed', error = :code, finished_at = :now, updated_at = :now
WHERE status = 'running'
