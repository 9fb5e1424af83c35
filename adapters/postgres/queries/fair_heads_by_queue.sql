-- The oldest due jobs at one priority of each of :fair_keys, :limit each after the first
-- :offset, with their limit and rate keys; none held ahead. One index seek per key and
-- queue read (_kind_queues) in jobs_fair_in_queue (kind, priority, fair_key, queue,
-- run_at, id), merged per key by age. By key, then age.
WITH RECURSIVE {{kind_queues}}
SELECT h.id, h.limit_key, h.rate_key, h.fair_key FROM (
    SELECT h.id, h.limit_key, h.rate_key, h.fair_key, h.run_at,
        row_number() OVER (PARTITION BY h.fair_key ORDER BY h.run_at, h.id) AS place
    FROM unnest(:fair_keys::text[]) AS k(fair_key)
    CROSS JOIN probed
    CROSS JOIN LATERAL (
        SELECT id, limit_key, rate_key, fair_key, run_at FROM jobs
        WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
          AND priority = :priority AND fair_key = k.fair_key AND held_by IS NULL
          AND queue >= probed.queue AND queue <= probed.queue
        ORDER BY queue, run_at, id LIMIT :limit::bigint + :offset::bigint
    ) AS h
) AS h
WHERE h.place > :offset AND h.place <= :offset::bigint + :limit::bigint
ORDER BY h.fair_key, h.run_at, h.id
