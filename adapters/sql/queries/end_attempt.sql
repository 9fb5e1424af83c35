-- Ends the attempt under the claim (:id, :runner_id, :attempt) and its job for good:
-- :status 'succeeded' with its :result, or 'failed' with its :code (and the :error_class of
-- the exception it raised, if any), keeping its last partial result. Only while the job runs under exactly that claim (a stale worker
-- changes nothing; a row that records no owner is fenced by an empty runner). The
-- attempt that ended the job is told by the row itself, not logged: the hot path writes
-- no JSON. A row found running has had at least one attempt (one a tool or an older
-- version wrote with none counts one). The job's unique key, if held only while it is
-- active, is let go by the jobs_unique index itself. A batch runs this once a row: a
-- plain update by id costs SQLite a third of one joined to the batch's rows.
UPDATE jobs
SET status = :status,
    result = CASE WHEN :status = 'succeeded' THEN :result ELSE result END,
    error = :code, last_code = :code, error_class = :error_class, finished_at = :now,
    updated_at = :now,
    cancel_requested = FALSE,
    attempt = CASE WHEN attempt < 1 THEN 1 ELSE attempt END
WHERE id = :id AND status = 'running' AND attempt = :attempt
  AND coalesce(claimed_by, '') = coalesce(:runner_id, '')
