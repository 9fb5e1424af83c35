-- 0009_unique_while_unfinished: a unique key held while its job is active is let go by
-- the index, not by each statement that ends a job. jobs_unique holds a row's key while
-- the job is unfinished, or for good when the key is kept past its job (a cron tick's, a
-- period's, until key_until); a finished job keeps its key to show. The predicate is
-- the one adapters/sql/queries/_holds_unique_key.sql writes, so ON CONFLICT finds it.
DROP INDEX jobs_unique;
CREATE UNIQUE INDEX jobs_unique ON jobs (kind, unique_key)
    WHERE unique_key IS NOT NULL
      AND (status IN ('queued', 'scheduled', 'running') OR NOT unique_while_active);
