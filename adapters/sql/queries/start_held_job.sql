-- A worker starts a job its runner held ahead: running under :runner_id from now, its
-- attempt counted. No row when it is no longer held so (cancelled meanwhile, or given
-- back when its runner was judged dead): then it never runs here.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now, claimed_by = :runner_id,
    attempt = attempt + 1, held_by = NULL
WHERE id = :id AND held_by = :runner_id AND status = 'queued' AND attempt + 1 = :attempt
