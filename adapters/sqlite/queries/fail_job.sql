-- Failed for good. The last partial result is kept.
UPDATE jobs
SET status = 'failed', error = :code, last_code = :code, finished_at = :now, updated_at = :now,
    cancel_requested = 0,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END,
    attempts_log = json_insert(coalesce(attempts_log, '[]'), '$[#]', json_object(
        'attempt', attempt, 'runner', claimed_by, 'started_at', started_at,
        'ended_at', :now, 'outcome', :code))
WHERE id = :id AND status = 'running' AND claimed_by IS :runner_id AND attempt = :attempt
