-- The first :limit due jobs in claim order (priority, then run_at, then id) of the
-- runner's kinds and queues, none held ahead by a runner, locked, as ``picked``. Paused
-- queues are passed over; a NULL queues array: every queue. Each kind is probed on its
-- own in the jobs_ready index (LATERAL, at most :limit rows each), so the pick costs the
-- same however many rows other kinds or the future hold. A paused queue is checked by
-- its key per candidate (NOT EXISTS): NOT IN over a subquery would be built again for
-- each kind probed. SKIP LOCKED: concurrent claimers pass each other by. MATERIALIZED:
-- the rows are picked (and locked) once, before the UPDATE, so the LIMIT holds.
WITH picked AS MATERIALIZED (
    SELECT first.id
    FROM unnest(:kinds::text[]) AS served(kind)
    CROSS JOIN LATERAL (
        SELECT id, priority, run_at FROM jobs
        WHERE status = 'queued' AND kind = served.kind AND held_by IS NULL
          AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
        ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
    ) AS first
    ORDER BY first.priority, first.run_at, first.id LIMIT :limit
)
