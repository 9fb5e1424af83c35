-- A job not yet running is cancelled at once: failed 'cancelled', never retried; one held
-- ahead by a runner too (its start then finds it gone).
UPDATE jobs
SET status = 'failed', error = 'cancelled', last_code = 'cancelled', error_class = NULL,
    finished_at = :now,
    updated_at = :now, held_by = NULL
WHERE id = :id AND status IN ('queued', 'scheduled')
