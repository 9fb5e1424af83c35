-- Scheduled jobs that are due become 'queued', where claims find them; a bounded batch
-- per statement, earliest first. Where rows can be locked, runners promoting at the same
-- moment share the work instead of waiting on each other.
UPDATE jobs SET status = 'queued', updated_at = :now
WHERE id IN (
    SELECT id FROM jobs WHERE status = 'scheduled' AND run_at <= :now
    ORDER BY run_at LIMIT :limit {{skip_locked}}
)
