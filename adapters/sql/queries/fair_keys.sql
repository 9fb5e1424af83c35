-- The distinct fair keys of a kind's due jobs at one priority, one index seek each in
-- jobs_fair (a loose index scan: the backlog behind each key is never read).
WITH RECURSIVE keyed(fair_key) AS (
    SELECT MIN(fair_key) FROM jobs
    WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind AND priority = :priority
    UNION ALL
    SELECT (
        SELECT MIN(fair_key) FROM jobs
        WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
          AND priority = :priority AND fair_key > keyed.fair_key
    )
    FROM keyed WHERE keyed.fair_key IS NOT NULL
)
SELECT fair_key FROM keyed WHERE fair_key IS NOT NULL
