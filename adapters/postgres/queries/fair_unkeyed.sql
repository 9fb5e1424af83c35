-- A fair kind's due jobs with no key at one priority, oldest first: after the keys' turns;
-- none held ahead, in the runner's queues, none in a paused queue.
SELECT id, limit_key, rate_key, fair_key FROM jobs
WHERE status = 'queued' AND fair_key IS NULL AND kind = :kind AND priority = :priority
  AND held_by IS NULL
  AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
ORDER BY run_at, id LIMIT :limit OFFSET :offset
