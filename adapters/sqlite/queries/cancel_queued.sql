-- A job not yet running is cancelled at once: failed 'cancelled', never retried.
UPDATE jobs
SET status = 'failed', error = 'cancelled', last_code = 'cancelled', finished_at = :now,
    updated_at = :now,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = :id AND status IN ('queued', 'scheduled')
