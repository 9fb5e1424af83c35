-- Give back a job whose handler never ran: queued, with its attempt returned, in its
-- old place (its run_at is unchanged); one someone asked to cancel meanwhile is
-- cancelled instead. Either way it started when it did before this claim: never (NULL)
-- before its first attempt, else at the start of the last attempt logged (every attempt
-- that ended and left the job to run again is logged, the last one always kept).
UPDATE jobs
SET status = CASE WHEN cancel_requested THEN 'failed' ELSE 'queued' END,
    error = CASE WHEN cancel_requested THEN 'cancelled' END,
    last_code = CASE WHEN cancel_requested THEN 'cancelled' ELSE last_code END,
    finished_at = CASE WHEN cancel_requested THEN %(now)s::timestamptz END,
    unique_key = CASE WHEN cancel_requested AND unique_while_active THEN NULL
                      ELSE unique_key END,
    started_at = (attempts_log -> -1 ->> 'started_at')::timestamptz,
    cancel_requested = false, attempt = attempt - 1, updated_at = %(now)s
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
