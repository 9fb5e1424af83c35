-- Marks the oldest queued job running under :runner_id and returns it; no
-- row when none is queued. The subquery reads the jobs_queued partial index.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1)
RETURNING id, kind, payload, attempt
