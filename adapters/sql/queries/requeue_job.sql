-- The attempt under the claim (:id, :runner_id, :attempt) ends and the job waits in line
-- again, for one of two reasons. It ran, and runs again (:ran = 1: a retry or a snooze,
-- due at :run_at): the attempt is logged with :code and :error_class, and given back (a snooze) when
-- :uncounted = 1. Or its claim is put back unrun (:ran = 0, :run_at = :now): its attempt
-- number and its start are as before this claim. Due at once, it keeps its old place in
-- line (its run_at); due later, it waits for then. The last partial result is kept: the
-- next attempt gets it as its checkpoint.
--
-- A job someone asked to cancel meanwhile fails 'cancelled' instead: a cancel is never
-- lost to a retry, a snooze or a put-back. This is the only statement that runs a
-- cancelled job's attempt out.
UPDATE jobs
SET status = CASE WHEN cancel_requested THEN 'failed'
                  WHEN :run_at > :now THEN 'scheduled' ELSE 'queued' END,
    error = CASE WHEN cancel_requested THEN 'cancelled' END,
    finished_at = CASE WHEN cancel_requested THEN :now END,
    last_code = CASE WHEN cancel_requested THEN 'cancelled'
                     WHEN :ran = 1 THEN :code ELSE last_code END,
    run_at = CASE WHEN cancel_requested OR :run_at <= :now THEN run_at ELSE :run_at END,
    started_at = CASE WHEN :ran = 1 THEN started_at ELSE {{start_before_this_attempt}} END,
    snoozes = snoozes + :ran * :uncounted,
    attempts_log = CASE WHEN :ran = 1 THEN {{attempts_log_with_this_attempt}}
                        ELSE attempts_log END,
    attempt = CASE WHEN attempt < 1 THEN 1 ELSE attempt END
        - CASE WHEN :ran = 0 THEN 1 WHEN cancel_requested THEN 0 ELSE :uncounted END,
    error_class = NULL, cancel_requested = FALSE, updated_at = :now
WHERE id = :id AND status = 'running' AND attempt = :attempt
  AND coalesce(claimed_by, '') = coalesce(:runner_id, '')
