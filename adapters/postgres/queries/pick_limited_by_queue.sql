-- pick_limited, reading each queue on its own (adapters/sql/queue_reads.py): each queue
-- read (_kind_queues) probed from the position in jobs_ready_in_queue (a row comparison
-- from the queue's start, so that the position bounds the index scan), and the probes
-- merged in claim order.
WITH RECURSIVE {{kind_queues}}
SELECT j.id, j.limit_key, j.rate_key, j.fair_key, j.priority, j.run_at::text AS position
FROM probed
CROSS JOIN LATERAL (
    SELECT id, limit_key, rate_key, fair_key, priority, run_at FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (queue, priority, run_at, id) > (
          probed.queue, :after_priority::smallint, :after_run_at::timestamptz, :after_id::text
      ) AND queue <= probed.queue
      AND (limit_key IS NULL OR limit_key <> ALL(:full::text[]))
      AND NOT (limit_key IS NULL AND :null_full::boolean)
      AND (limit_key IS NULL OR NOT :only_null::boolean)
    ORDER BY queue, priority, run_at, id LIMIT :limit
) AS j
ORDER BY j.priority, j.run_at, j.id LIMIT :limit
