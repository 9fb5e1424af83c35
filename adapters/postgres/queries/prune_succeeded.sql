-- Up to %(limit)s succeeded jobs that ended before %(cutoff)s, oldest first (the
-- jobs_finished index). A row still holding a key an enqueue could make again stays:
-- its key_until has not passed, or it keeps its key for good (NULL). The trigger
-- jobs_deleted takes each job's history with it. Rows another transaction holds are
-- skipped, not waited for, and the conditions are checked again on each row deleted:
-- a retry that committed meanwhile (the row no longer succeeded) keeps its job. The
-- choice is a materialized CTE, read once: a LIMIT in an IN (...) subquery may be
-- read again by the plan and delete more.
WITH doomed AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'succeeded' AND finished_at < %(cutoff)s
      AND (unique_key IS NULL OR key_until <= %(now)s)
    ORDER BY finished_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM jobs USING doomed
WHERE jobs.id = doomed.id AND jobs.status = 'succeeded' AND jobs.finished_at < %(cutoff)s
