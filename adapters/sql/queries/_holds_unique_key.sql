-- Whether a row holds its unique key (the predicate of the jobs_unique index, written the
-- same there, so ON CONFLICT finds that index): a key held while its job is active is held
-- until the job ends for good; one kept for good (a cron tick's, a period's) always is.
unique_key IS NOT NULL AND (status IN ('queued', 'scheduled', 'running') OR NOT unique_while_active)
