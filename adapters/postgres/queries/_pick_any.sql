-- As _pick_next, for a caller that serves every kind (tests, tools): sorts the due rows
-- instead of probing per kind.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'queued' AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
)
