-- The first :limit due jobs in claim order of each of :limit_keys, one index seek per key
-- (jobs_limit_keys), with their keys, all in claim order; none held ahead, in the runner's
-- queues, none in a paused queue.
SELECT h.id, h.limit_key, h.rate_key, h.fair_key
FROM unnest(:limit_keys::text[]) AS k(limit_key)
CROSS JOIN LATERAL (
    SELECT id, limit_key, rate_key, fair_key, priority, run_at FROM jobs
    WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
      AND limit_key = k.limit_key AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id LIMIT :limit
) AS h
ORDER BY h.priority, h.run_at, h.id
