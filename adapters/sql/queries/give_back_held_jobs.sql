-- Every job :runner_id holds ahead, freed for any runner: at its stop, when it lost its
-- liveness, or when it was judged dead (by jobs_held, however deep the queue).
UPDATE jobs SET held_by = NULL WHERE held_by = :runner_id
