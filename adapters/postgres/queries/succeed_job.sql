UPDATE jobs
SET status = 'succeeded', result = %(result)s, finished_at = %(now)s, updated_at = %(now)s,
    last_code = NULL, cancel_requested = false,
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END,
    attempts_log = coalesce(attempts_log, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
        'attempt', attempt, 'runner', claimed_by, 'started_at', started_at,
        'ended_at', %(now)s::timestamptz, 'outcome', 'succeeded'))
WHERE id = %(id)s AND status = 'running' AND claimed_by = %(runner_id)s AND attempt = %(attempt)s
