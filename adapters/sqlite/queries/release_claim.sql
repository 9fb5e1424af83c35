-- Give back a job whose handler never ran: queued, with its attempt returned, in its
-- old place (its run_at is unchanged).
UPDATE jobs
SET status = 'queued', attempt = attempt - 1, updated_at = :now
WHERE id = :id AND status = 'running' AND claimed_by = :runner_id AND attempt = :attempt
