-- Every queue's jobs counted by stored status, read from the jobs_by_queue index alone
-- (queue, status, id covers it): no row is read, and no sort. Scheduled jobs are shown
-- as queued, and queues that hold no job but a pause are added, by the caller.
SELECT queue, status, count(*) FROM jobs GROUP BY queue, status
