-- The jobs running under one runner's claims, with what settling each needs; reads the
-- jobs_running partial index. (Rows that record no owner: the same with claimed_by IS NULL.)
SELECT id, kind, attempt, max_attempts, retry, started_at FROM jobs
WHERE status = 'running' AND claimed_by = :owner
