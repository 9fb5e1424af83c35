-- The distinct limit keys of a kind's waiting jobs, :limit of them in key order, one
-- index seek each in jobs_limit_keys (SQLite's: jobs_limit_keys_in_queue), a loose index
-- scan: the backlog behind each key is never read.
WITH RECURSIVE keyed(limit_key) AS (
    SELECT MIN(limit_key) FROM jobs
    WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
    UNION ALL
    SELECT (
        SELECT MIN(limit_key) FROM jobs
        WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
          AND limit_key > keyed.limit_key
    )
    FROM keyed WHERE keyed.limit_key IS NOT NULL
)
SELECT limit_key FROM keyed WHERE limit_key IS NOT NULL LIMIT :limit
