-- Scheduled jobs that are due become 'queued', where claims find them; a bounded
-- batch per statement, earliest first.
UPDATE jobs SET status = 'queued', updated_at = :now
WHERE id IN (
    SELECT id FROM jobs WHERE status = 'scheduled' AND run_at <= :now
    ORDER BY run_at LIMIT :limit
)
