-- As pick_in_queue, for a caller that serves every kind (tests, tools).
SELECT id, limit_key, rate_key, fair_key, kind, priority, run_at FROM jobs
WHERE status = 'queued' AND queue = :queue AND held_by IS NULL
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = :queue AND p.paused)
ORDER BY priority, run_at, id LIMIT :limit OFFSET :offset
