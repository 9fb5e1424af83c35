-- A queue's limits as an operator set them (NULL: none); its pause stays as it was.
INSERT INTO jobtable_queues (name, paused, updated_at, running_limit, rate_n, rate_per)
VALUES (:name, FALSE, :now, :running_limit, :rate_n, :rate_per)
ON CONFLICT (name) DO UPDATE SET
    running_limit = excluded.running_limit,
    rate_n = excluded.rate_n,
    rate_per = excluded.rate_per,
    updated_at = excluded.updated_at
