SELECT id, kind, CASE status WHEN 'scheduled' THEN 'queued' ELSE status END, result, error,
       queue, priority, run_at, attempt, max_attempts, created_at, started_at, finished_at,
       timeout, unique_key, cancel_requested, claimed_by, attempts_log, last_code, status,
       snoozes
FROM jobs WHERE id = :id
