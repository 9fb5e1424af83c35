-- Jobs waiting or running, by queue and kind: only rows in these states are read
-- (jobs_by_status for the waiting, jobs_running for the running), however many
-- finished jobs the table keeps.
SELECT queue, kind, status, count(*) FROM (
    SELECT queue, kind, status FROM jobs
    WHERE status IN ('queued', 'scheduled') AND status <> 'running'
    UNION ALL
    SELECT queue, kind, status FROM jobs WHERE status = 'running'
) AS waiting_or_running
GROUP BY queue, kind, status
ORDER BY queue, kind, status
