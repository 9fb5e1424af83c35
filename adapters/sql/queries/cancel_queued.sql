-- A job not yet running is cancelled at once: failed 'cancelled', never retried.
UPDATE jobs
SET status = 'failed', error = 'cancelled', last_code = 'cancelled', finished_at = :now,
    updated_at = :now
WHERE id = :id AND status IN ('queued', 'scheduled')
