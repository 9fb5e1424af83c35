-- The jobs running under one runner's claims; reads the jobs_running partial index.
SELECT id, attempt FROM jobs WHERE status = 'running' AND claimed_by = :runner_id
