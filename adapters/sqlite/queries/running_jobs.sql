-- Every running job and its owner; reads the jobs_running partial index.
SELECT id, kind, attempt, claimed_by FROM jobs WHERE status = 'running'
