-- Marks the oldest queued job of the runner's kinds running under :runner_id and
-- returns it; no row when none is queued. :kinds is a JSON array of kind names
-- (NULL: any kind). The subquery reads the jobs_queued partial index in id order.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id = (
    SELECT id FROM jobs
    WHERE status = 'queued'
      AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))
    ORDER BY id LIMIT 1
)
RETURNING id, kind, payload, attempt
