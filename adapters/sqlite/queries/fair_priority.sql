-- The first priority after :after at which a fair kind has a due job (NULL: none), in the
-- runner's queues, none in a paused queue: the first such row in jobs_ready, not a MIN
-- over the whole backlog.
SELECT (
    SELECT priority FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL AND priority > :after
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority LIMIT 1
)
