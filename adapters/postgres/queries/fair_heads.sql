-- The oldest due jobs at one priority of each of :fair_keys, :limit each after the first
-- :offset, one index seek per key (jobs_fair), with their limit and rate keys; none held
-- ahead, in the runner's queues, none in a paused queue. By key, then age.
SELECT h.id, h.limit_key, h.rate_key, h.fair_key
FROM unnest(:fair_keys::text[]) AS k(fair_key)
CROSS JOIN LATERAL (
    SELECT id, limit_key, rate_key, fair_key, run_at FROM jobs
    WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
      AND priority = :priority AND fair_key = k.fair_key AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY run_at, id LIMIT :limit OFFSET :offset
) AS h
ORDER BY h.fair_key, h.run_at, h.id
