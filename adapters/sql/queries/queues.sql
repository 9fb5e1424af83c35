-- Every queue's jobs counted by stored status, read from indexes alone: all but the
-- running ones from jobs_by_queue (queue, status, id covers them; no row is read, and no
-- sort), the running ones (few: one per busy worker) through jobs_running. Scheduled jobs
-- are shown as queued, and queues that hold no job but a pause are added, by the caller.
SELECT queue, status, count(*) FROM jobs WHERE status <> 'running' GROUP BY queue, status
UNION ALL
SELECT queue, status, count(*) FROM jobs WHERE status = 'running' GROUP BY queue, status
