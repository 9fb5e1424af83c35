-- RunAgain: queued again, due at :run_at, after an attempt that ended with :code;
-- with uncounted = 1 the attempt is not spent (a snooze). The last partial result is
-- kept: the next attempt gets it as its checkpoint. Due at once, it keeps its old place
-- in line (its run_at); due later, it waits for then. A job someone asked to cancel
-- meanwhile fails 'cancelled' instead: a cancel is never lost to a retry. Snoozes are
-- counted; the log keeps this attempt and the 19 before it (ATTEMPTS_KEPT, 20), so a job
-- that snoozes for ever stays the same size. A row found running has had at least one
-- attempt: one a tool or an older version wrote with none counts one.
UPDATE jobs
SET status = CASE WHEN cancel_requested THEN 'failed'
                  WHEN :run_at > :now THEN 'scheduled' ELSE 'queued' END,
    error = CASE WHEN cancel_requested THEN 'cancelled' END,
    finished_at = CASE WHEN cancel_requested THEN :now END,
    unique_key = CASE WHEN cancel_requested AND unique_while_active THEN NULL
                      ELSE unique_key END,
    run_at = CASE WHEN cancel_requested OR :run_at <= :now THEN run_at ELSE :run_at END,
    last_code = CASE WHEN cancel_requested THEN 'cancelled' ELSE :code END,
    updated_at = :now, cancel_requested = 0,
    snoozes = snoozes + :uncounted,
    attempts_log = json_insert(
        (SELECT json_group_array(json(entry.value))
         FROM json_each(coalesce(jobs.attempts_log, '[]')) AS entry
         WHERE entry.key >= json_array_length(coalesce(jobs.attempts_log, '[]')) - 19),
        '$[#]', json_object(
            'attempt', max(attempt, 1), 'runner', claimed_by, 'started_at', started_at,
            'ended_at', :now, 'outcome', :code)),
    attempt = max(attempt, 1) - CASE WHEN cancel_requested THEN 0 ELSE :uncounted END
WHERE id = :id AND status = 'running' AND claimed_by IS :runner_id AND attempt = :attempt
