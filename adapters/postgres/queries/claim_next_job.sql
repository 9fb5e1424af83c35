-- Marks the oldest queued job of the runner's kinds running under %(runner_id)s
-- and returns it; no row when none is queued (a NULL kinds array: any kind).
-- SKIP LOCKED: concurrent claimers pass each other by.
UPDATE jobs
SET status = 'running', started_at = %(now)s, updated_at = %(now)s,
    claimed_by = %(runner_id)s, attempt = attempt + 1
WHERE id = (
    SELECT id FROM jobs
    WHERE status = 'queued'
      AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
)
RETURNING id, kind, payload, attempt
