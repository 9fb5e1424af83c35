-- The running jobs of one runner that someone asked to cancel (reads jobs_running).
SELECT id, attempt FROM jobs
WHERE status = 'running' AND claimed_by = :runner_id AND cancel_requested
