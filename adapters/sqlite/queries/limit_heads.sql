-- The first :limit due jobs in claim order of each of :limit_keys (a JSON array), one
-- index seek per key (jobs_limit_keys), with their keys, all in claim order; none held ahead,
-- in the runner's queues, none in a paused queue. INDEXED BY and CROSS JOIN as in
-- fair_heads: the keys are the outer loop, however skewed the statistics.
SELECT j.id, j.limit_key, j.rate_key, j.fair_key
FROM json_each(:limit_keys) AS k
CROSS JOIN jobs AS j ON j.id IN (
    SELECT id FROM jobs INDEXED BY jobs_limit_keys
    WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
      AND limit_key = k.value AND held_by IS NULL
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id LIMIT :limit
)
ORDER BY j.priority, j.run_at, j.id
