-- Jobs waiting or running, by queue and kind: only rows in these states are read
-- (jobs_by_status), however many finished jobs the table keeps.
SELECT queue, kind, status, count(*)
FROM jobs
WHERE status IN ('queued', 'scheduled', 'running')
GROUP BY queue, kind, status
ORDER BY queue, kind, status
