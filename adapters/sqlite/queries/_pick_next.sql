-- The ids of the first :limit due jobs in claim order (priority, then run_at, then id) of
-- the runner's kinds and queues, none held ahead by a runner. :kinds is a JSON array of
-- kind names, :queues one of queue names (NULL: every queue); paused queues are passed
-- over. Each kind is probed on its own in the jobs_ready index (at most :limit rows
-- each), so the pick costs the same however many rows other kinds or the future hold.
-- A paused queue is checked by its key per candidate (NOT EXISTS): NOT IN over a
-- subquery would be built again for each kind probed, and cost more than the rest.
SELECT first.id
FROM json_each(:kinds) AS served
JOIN jobs AS first ON first.id IN (
    SELECT id FROM jobs
    WHERE status = 'queued' AND kind = served.value AND held_by IS NULL
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id LIMIT :limit
)
ORDER BY first.priority, first.run_at, first.id LIMIT :limit
