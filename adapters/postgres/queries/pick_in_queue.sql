-- Due jobs of one kind in one limited queue in claim order, a page at a time, with their
-- keys and sort columns: a claim merges the kinds it serves and takes what the queue's
-- (and the kind's) slots allow. Read from jobs_ready_in_queue (kind, queue, priority,
-- run_at, id); the pause is one check of the queue (not a join per row: a planner would
-- sort the kind). The queue named by a range and ordered by (see _kind_queues): a plan
-- made for any queue (a generic plan, once psycopg prepares the statement) would rather
-- walk jobs_ready past the other queues' jobs, guessing most rows are this queue's.
SELECT id, limit_key, rate_key, fair_key, kind, priority, run_at FROM jobs
WHERE status = 'queued' AND kind = :kind AND queue >= :queue AND queue <= :queue
  AND held_by IS NULL
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = :queue AND p.paused)
ORDER BY queue, priority, run_at, id LIMIT :limit OFFSET :offset
