-- RunAgain: queued again, due at %(run_at)s, after an attempt that ended with %(code)s;
-- with uncounted = 1 the attempt is not spent (a snooze). The last partial result is
-- kept: the next attempt gets it as its checkpoint. Due at once, it keeps its old place
-- in line (its run_at); due later, it waits for then. A job someone asked to cancel
-- meanwhile fails 'cancelled' instead: a cancel is never lost to a retry. Snoozes are
-- counted; the log keeps this attempt and the 19 before it (ATTEMPTS_KEPT, 20), so a job
-- that snoozes for ever stays the same size. A row found running has had at least one
-- attempt: one a tool or an older version wrote with none counts one.
UPDATE jobs
SET status = CASE WHEN cancel_requested THEN 'failed'
                  WHEN %(run_at)s::timestamptz > %(now)s::timestamptz THEN 'scheduled'
                  ELSE 'queued' END,
    error = CASE WHEN cancel_requested THEN 'cancelled' END,
    finished_at = CASE WHEN cancel_requested THEN %(now)s::timestamptz END,
    unique_key = CASE WHEN cancel_requested AND unique_while_active THEN NULL
                      ELSE unique_key END,
    run_at = CASE WHEN cancel_requested OR %(run_at)s::timestamptz <= %(now)s::timestamptz
                  THEN run_at ELSE %(run_at)s::timestamptz END,
    last_code = CASE WHEN cancel_requested THEN 'cancelled' ELSE %(code)s::text END,
    updated_at = %(now)s, cancel_requested = false,
    snoozes = snoozes + %(uncounted)s::integer,
    attempts_log = jsonb_path_query_array(
        coalesce(attempts_log, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', GREATEST(attempt, 1), 'runner', claimed_by, 'started_at', started_at,
            'ended_at', %(now)s::timestamptz, 'outcome', %(code)s::text)),
        '$[last - 19 to last]'),
    attempt = GREATEST(attempt, 1)
        - CASE WHEN cancel_requested THEN 0 ELSE %(uncounted)s::integer END
WHERE id = %(id)s AND status = 'running' AND claimed_by IS NOT DISTINCT FROM %(runner_id)s
  AND attempt = %(attempt)s
