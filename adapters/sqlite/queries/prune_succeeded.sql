-- Up to :limit succeeded jobs that ended before :cutoff, oldest first (the
-- jobs_finished index). A row still holding a key an enqueue could make again stays:
-- its key_until has not passed, or it keeps its key for good (NULL). The trigger
-- jobs_deleted takes each job's history with it. The conditions are checked again on
-- the row being deleted: a retry that committed meanwhile (the row no longer succeeded)
-- keeps its job.
DELETE FROM jobs
WHERE id IN (
    SELECT id FROM jobs
    WHERE status = 'succeeded' AND finished_at < :cutoff
      AND (unique_key IS NULL OR key_until <= :now)
    ORDER BY finished_at
    LIMIT :limit
)
  AND status = 'succeeded' AND finished_at < :cutoff
