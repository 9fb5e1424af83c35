-- The first :limit due jobs in claim order (priority, then run_at, then id) of the
-- runner's kinds and queues, none held ahead by a runner, locked, as ``picked``. Paused
-- queues are passed over; a NULL queues array: every queue. Each kind is probed on its
-- own in the jobs_ready index (LATERAL, at most :limit rows each), so the pick costs the
-- same however many rows other kinds or the future hold. A paused queue is checked by
-- its key per candidate (NOT EXISTS): NOT IN over a subquery would be built again for
-- each kind probed. While any queue is passed over (paused, or limited: claimed apart),
-- its backlog would be walked by that probe: each kind's queues are probed on their own
-- instead, in jobs_ready_in_queue (kind, queue, ...), found one seek each (``queues_of``)
-- and the passed-over ones left out, so a paused queue's backlog costs a claim nothing.
-- Which branch runs is decided once (a one-time filter). SKIP LOCKED: concurrent
-- claimers pass each other by. MATERIALIZED: the rows are picked (and locked) once,
-- before the UPDATE, so the LIMIT holds.
WITH RECURSIVE queues_of(kind, queue) AS (
    SELECT served.kind, (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = served.kind ORDER BY queue LIMIT 1
    )
    FROM unnest(:kinds::text[]) AS served(kind)
    WHERE EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
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
              AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
              AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
            ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
        ) AS first
        WHERE NOT EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
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
