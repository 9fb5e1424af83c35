-- A job held ahead that no worker of :runner_id will start (it waited past the bound, or
-- the runner stops): free for any runner again, as it was.
UPDATE jobs SET held_by = NULL WHERE id = :id AND held_by = :runner_id
