SELECT id, kind, CASE status WHEN 'scheduled' THEN 'queued' ELSE status END, result, error,
       queue, priority, run_at, attempt, max_attempts, created_at, started_at, finished_at,
       timeout, unique_key, cancel_requested, claimed_by, attempts_log, last_code, status,
       snoozes, error_class, payload, coalesce((SELECT max(version) FROM job_events WHERE job_id = jobs.id), 0)
FROM jobs WHERE id = :id
