-- The first :limit due jobs in claim order of each of :limit_keys (a JSON array) in each
-- queue read (_kind_queues), with their keys, all in claim order; none held ahead. One
-- index seek per key and queue in jobs_limit_keys_in_queue (kind, limit_key, queue,
-- priority, run_at, id). A key in several queues may bring more than :limit: the caller
-- takes what its slots allow. INDEXED BY and CROSS JOIN as in fair_heads: the keys are
-- the outer loop, however skewed the statistics.
WITH RECURSIVE {{kind_queues}}
SELECT j.id, j.limit_key, j.rate_key, j.fair_key
FROM json_each(:limit_keys) AS k
CROSS JOIN probed
CROSS JOIN jobs AS j ON j.id IN (
    SELECT id FROM jobs INDEXED BY jobs_limit_keys_in_queue
    WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
      AND limit_key = k.value AND queue = probed.queue AND held_by IS NULL
    ORDER BY priority, run_at, id LIMIT :limit
)
ORDER BY j.priority, j.run_at, j.id
