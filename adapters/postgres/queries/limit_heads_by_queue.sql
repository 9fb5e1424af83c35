-- The first :limit due jobs in claim order of each of :limit_keys in each queue read
-- (_kind_queues), with their keys, all in claim order; none held ahead. One index seek
-- per key and queue in jobs_limit_keys_in_queue (kind, limit_key, queue, priority,
-- run_at, id). A key in several queues may bring more than :limit: the caller takes what
-- its slots allow.
WITH RECURSIVE {{kind_queues}}
SELECT h.id, h.limit_key, h.rate_key, h.fair_key
FROM unnest(:limit_keys::text[]) AS k(limit_key)
CROSS JOIN probed
CROSS JOIN LATERAL (
    SELECT id, limit_key, rate_key, fair_key, priority, run_at FROM jobs
    WHERE status = 'queued' AND limit_key IS NOT NULL AND kind = :kind
      AND limit_key = k.limit_key AND held_by IS NULL
      AND queue >= probed.queue AND queue <= probed.queue
    ORDER BY queue, priority, run_at, id LIMIT :limit
) AS h
ORDER BY h.priority, h.run_at, h.id
