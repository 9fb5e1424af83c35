SELECT id, kind, CASE status WHEN 'scheduled' THEN 'queued' ELSE status END, result, error,
       coalesce((SELECT max(version) FROM job_events WHERE job_id = jobs.id), 0)
FROM jobs WHERE id = :id
