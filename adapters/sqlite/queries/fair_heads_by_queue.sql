-- The oldest due jobs at one priority of each of :fair_keys (a JSON array), :limit each
-- after the first :offset, with their limit and rate keys; none held ahead. One index
-- seek per key and queue read (_kind_queues) in jobs_fair_in_queue (kind, priority,
-- fair_key, queue, run_at, id), merged per key by age. By key, then age.
-- INDEXED BY: one key holding most rows must not make the planner walk the whole kind;
-- CROSS JOIN: the keys are the outer loop (statistics from a young table would make it
-- every row of jobs).
WITH RECURSIVE {{kind_queues}}
SELECT id, limit_key, rate_key, fair_key FROM (
    SELECT j.id, j.limit_key, j.rate_key, j.fair_key, j.run_at,
        row_number() OVER (PARTITION BY j.fair_key ORDER BY j.run_at, j.id) AS place
    FROM json_each(:fair_keys) AS k
    CROSS JOIN probed
    CROSS JOIN jobs AS j ON j.id IN (
        SELECT id FROM jobs INDEXED BY jobs_fair_in_queue
        WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
          AND priority = :priority AND fair_key = k.value AND queue = probed.queue
          AND held_by IS NULL
        ORDER BY run_at, id LIMIT :limit + :offset
    )
)
WHERE place > :offset AND place <= :offset + :limit
ORDER BY fair_key, run_at, id
