-- The attempts log with the attempt that ends now (:now, :code) added, keeping the last 20
-- (ATTEMPTS_KEPT), so a job that snoozes for ever stays the same size.
jsonb_path_query_array(
    coalesce(attempts_log, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
        'attempt', GREATEST(attempt, 1), 'runner', claimed_by, 'started_at', started_at,
        'ended_at', :now::timestamptz, 'outcome', :code::text,
        'error_class', :error_class::text)),
    '$[last - 19 to last]')
