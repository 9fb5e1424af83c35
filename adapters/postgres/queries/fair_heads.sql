-- A fair key's oldest due jobs at one priority (jobs_fair), with their limit and rate keys;
-- none held ahead, in the runner's queues, none in a paused queue.
SELECT id, limit_key, rate_key, fair_key FROM jobs
WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind AND priority = :priority
  AND fair_key = :fair_key AND held_by IS NULL
  AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
ORDER BY run_at, id LIMIT :limit OFFSET :offset
