-- An operator's retry: a failed job is queued again, due now, with at least one more
-- attempt allowed (as Oban's retry_job: its budget is kept when some was left). The
-- attempt that ended it, told until now by the row itself, moves into the log, so
-- its detail keeps every attempt. An attempt is told apart by its number and its start
-- (a snooze gives its number back, so two attempts may share one). The log keeps the
-- last 20 (ATTEMPTS_KEPT), as requeue_job's does. A job whose unique key another job
-- took meanwhile is left failed: two jobs never hold one key.
UPDATE jobs
SET status = 'queued', held_by = NULL, error = NULL, finished_at = NULL, cancel_requested = false,
    run_at = :now, updated_at = :now, max_attempts = GREATEST(max_attempts, attempt + 1),
    attempts_log = CASE
        WHEN attempt >= 1 AND NOT EXISTS (
            SELECT 1 FROM jsonb_array_elements(coalesce(attempts_log, '[]'::jsonb)) AS entry
            WHERE (entry ->> 'attempt')::integer = attempt
              AND (entry ->> 'started_at')::timestamptz IS NOT DISTINCT FROM started_at)
        THEN jsonb_path_query_array(
            coalesce(attempts_log, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
                'attempt', attempt, 'runner', claimed_by, 'started_at', started_at,
                'ended_at', finished_at, 'outcome', error, 'error_class', error_class)),
            '$[last - 19 to last]')
        ELSE attempts_log END,
    error_class = NULL
WHERE id = :id AND status = 'failed' AND NOT ({{key_held_by_another}})
