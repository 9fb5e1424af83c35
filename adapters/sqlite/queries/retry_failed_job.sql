-- An operator's retry: a failed job is queued again, due now, with at least one more
-- attempt allowed (as Oban's retry_job: its budget is kept when some was left). The
-- attempt that ended it, told until now by the row itself, moves into the log, so
-- its detail keeps every attempt. An attempt is told apart by its number and its start
-- (a snooze gives its number back, so two attempts may share one). The log keeps the
-- last 20 (ATTEMPTS_KEPT), as requeue_job's does. A job whose unique key another job
-- took meanwhile is left failed: two jobs never hold one key.
UPDATE jobs
SET status = 'queued', held_by = NULL, error = NULL, finished_at = NULL, cancel_requested = 0,
    run_at = :now, updated_at = :now, max_attempts = max(max_attempts, attempt + 1),
    attempts_log = CASE
        WHEN attempt >= 1 AND NOT EXISTS (
            SELECT 1 FROM json_each(coalesce(jobs.attempts_log, '[]')) AS entry
            WHERE json_extract(entry.value, '$.attempt') = jobs.attempt
              AND json_extract(entry.value, '$.started_at') IS jobs.started_at)
        THEN json_insert(
            (SELECT json_group_array(json(entry.value))
             FROM json_each(coalesce(jobs.attempts_log, '[]')) AS entry
             WHERE entry.key >= json_array_length(coalesce(jobs.attempts_log, '[]')) - 19),
            '$[#]', json_object(
                'attempt', attempt, 'runner', claimed_by, 'started_at', started_at,
                'ended_at', finished_at, 'outcome', error, 'error_class', error_class))
        ELSE attempts_log END,
    error_class = NULL
WHERE id = :id AND status = 'failed' AND NOT ({{key_held_by_another}})
