-- pick_limited, reading each queue on its own (adapters/sql/queue_reads.py): each queue
-- read (_kind_queues) probed from the position in jobs_ready_in_queue, and the probes
-- merged in claim order.
WITH RECURSIVE {{kind_queues}}
SELECT j.id, j.limit_key, j.rate_key, j.fair_key, j.priority, j.run_at
FROM probed
JOIN jobs AS j ON j.id IN (
    SELECT id FROM jobs INDEXED BY jobs_ready_in_queue
    WHERE status = 'queued' AND kind = :kind AND queue = probed.queue AND held_by IS NULL
      AND (priority, run_at, id) > (:after_priority, :after_run_at, :after_id)
      AND (limit_key IS NULL OR limit_key NOT IN (SELECT value FROM json_each(:full)))
      AND NOT (limit_key IS NULL AND :null_full)
      AND (limit_key IS NULL OR NOT :only_null)
    ORDER BY priority, run_at, id LIMIT :limit
)
ORDER BY j.priority, j.run_at, j.id LIMIT :limit
