-- A job as it is now, with its kept changes after :after, in one snapshot: no row
-- when there is no such job; one row with NULL change columns when none is kept.
SELECT jobs.kind, CASE jobs.status WHEN 'scheduled' THEN 'queued' ELSE jobs.status END,
       jobs.result, jobs.error,
       coalesce((SELECT max(version) FROM job_events WHERE job_id = jobs.id), 0),
       change.version, change.status, change.result, change.error
FROM jobs
LEFT JOIN job_events AS change ON change.job_id = jobs.id AND change.version > :after
WHERE jobs.id = :id
ORDER BY change.version
