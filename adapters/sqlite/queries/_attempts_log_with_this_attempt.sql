-- The attempts log with the attempt that ends now (:now, :code) added, keeping the last 20
-- (ATTEMPTS_KEPT), so a job that snoozes for ever stays the same size.
json_insert(
    (SELECT json_group_array(json(entry.value))
     FROM json_each(coalesce(jobs.attempts_log, '[]')) AS entry
     WHERE entry.key >= json_array_length(coalesce(jobs.attempts_log, '[]')) - 19),
    '$[#]', json_object(
        'attempt', max(attempt, 1), 'runner', claimed_by, 'started_at', started_at,
        'ended_at', :now, 'outcome', :code, 'error_class', :error_class))
