-- Up to :limit jobs in :status (succeeded or failed) that ended before :cutoff, oldest
-- first (the jobs_finished index). A row still holding a key an enqueue could make again
-- stays: a key kept past its job until key_until, not passed yet, or kept for good (NULL).
-- The trigger jobs_deleted takes each job's history with it. Where rows can be locked,
-- those another transaction holds are skipped, not waited for; the conditions are checked
-- again on each row deleted: a retry that committed meanwhile keeps its job. The choice
-- is materialized, read once: a LIMIT in an IN (...) subquery may be read again by a plan
-- and delete more. Returns the ids deleted (a statement that starts with WITH has no row
-- count in Python's sqlite3).
WITH doomed AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status IN ('succeeded', 'failed') AND status = :status AND finished_at < :cutoff
      AND (unique_key IS NULL OR unique_while_active OR key_until <= :now)
    ORDER BY finished_at
    LIMIT :limit {{skip_locked}}
)
DELETE FROM jobs
WHERE id IN (SELECT id FROM doomed) AND status = :status AND finished_at < :cutoff
RETURNING id
