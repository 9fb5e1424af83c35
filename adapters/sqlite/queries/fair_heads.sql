-- The oldest due jobs at one priority of each of :fair_keys (a JSON array), :limit each
-- after the first :offset, one index seek per key (jobs_fair), with their limit and rate
-- keys; none held ahead, in the runner's queues, none in a paused queue. By key, then age.
-- INDEXED BY: one key holding most rows must not make the planner walk the whole kind;
-- CROSS JOIN: the keys are the outer loop (statistics from a young table would make it
-- every row of jobs).
SELECT j.id, j.limit_key, j.rate_key, j.fair_key
FROM json_each(:fair_keys) AS k
CROSS JOIN jobs AS j ON j.id IN (
    SELECT id FROM jobs INDEXED BY jobs_fair
    WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
      AND priority = :priority AND fair_key = k.value AND held_by IS NULL
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY run_at, id LIMIT :limit OFFSET :offset
)
ORDER BY j.fair_key, j.run_at, j.id
