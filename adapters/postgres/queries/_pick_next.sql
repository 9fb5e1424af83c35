-- The first :limit due jobs in claim order (priority, then run_at, then id) of the
-- runner's kinds and queues, none held ahead by a runner, locked, as ``picked``. Paused
-- and limited queues (claimed apart) are passed over; a NULL queues array: every queue.
-- Each kind is probed on its own (LATERAL, at most :limit rows each), so the pick costs
-- the same however many rows other kinds or the future hold:
-- - while the runner serves every queue and none is passed over, in jobs_ready (kind,
--   priority, run_at, id);
-- - else each of the kind's queues on its own, in jobs_ready_in_queue (kind, queue,
--   priority, run_at, id), the queues found one seek each (``queues_of``), those passed
--   over or not served left out: a paused queue's backlog, or another runner's queue's,
--   costs the claim nothing.
-- Which branch runs is decided once (a one-time filter). SKIP LOCKED: concurrent claimers
-- pass each other by. MATERIALIZED: the rows are picked (and locked) once, before the
-- UPDATE, so the LIMIT holds.
WITH RECURSIVE queues_of(kind, queue) AS (
    SELECT served.kind, (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = served.kind ORDER BY queue LIMIT 1
    )
    FROM unnest(:kinds::text[]) AS served(kind)
    WHERE :queues::text[] IS NOT NULL OR EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
    UNION ALL
    SELECT q.kind, (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = q.kind AND queue > q.queue ORDER BY queue LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
), picked AS MATERIALIZED (
    SELECT first.id FROM (
        SELECT first.id, first.priority, first.run_at
        FROM unnest(:kinds::text[]) AS served(kind)
        CROSS JOIN LATERAL (
            SELECT id, priority, run_at FROM jobs
            WHERE status = 'queued' AND kind = served.kind AND held_by IS NULL
            ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
        ) AS first
        WHERE :queues::text[] IS NULL AND NOT EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
        UNION ALL
        SELECT first.id, first.priority, first.run_at
        FROM queues_of AS q
        CROSS JOIN LATERAL (
            SELECT id, priority, run_at FROM jobs
            WHERE status = 'queued' AND kind = q.kind AND queue = q.queue AND held_by IS NULL
            ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
        ) AS first
        WHERE q.queue IS NOT NULL
          AND (:queues::text[] IS NULL OR q.queue = ANY(:queues::text[]))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = q.queue AND p.passed_over)
    ) AS first
    ORDER BY first.priority, first.run_at, first.id LIMIT :limit
)
