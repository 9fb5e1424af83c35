-- The first :limit due jobs in claim order (priority, then run_at, then id) of the
-- runner's kinds and queues, none held ahead by a runner, locked, as ``picked``. Paused
-- and limited queues (claimed apart) are passed over; a NULL queues array: every queue.
-- Each kind is probed on its own (LATERAL, at most :limit rows each), so the pick costs
-- the same however many rows other kinds or the future hold:
-- - a kind with no due job in a passed-over queue, while the runner serves every queue
--   (or more than 8 by name), in jobs_ready (kind, priority, run_at, id): no row it
--   reads is passed over (a queue not served is, one by one);
-- - else (``apart``) each of its queues on its own, in jobs_ready_in_queue (kind, queue,
--   priority, run_at, id): the runner's queues, or when it serves every queue the kind's
--   queues, found one seek each (``queues_of``); those passed over are left out. So a
--   paused queue's backlog, or another runner's queue's, costs the claim nothing; what
--   it costs instead grows with the queues probed (hence 8 by name at most).
-- Which way each kind is read is decided once (``apart``: a seek per passed-over queue).
-- SKIP LOCKED: concurrent claimers pass each other by; each probe locks the rows it
-- reads, up to :limit (so a kind read queue by queue locks up to :limit per queue until
-- the claim commits). MATERIALIZED: the rows are picked (and locked) once, before the
-- UPDATE, so the LIMIT holds.
WITH RECURSIVE apart(kind) AS MATERIALIZED (
    SELECT served.kind FROM unnest(:kinds::text[]) AS served(kind)
    WHERE cardinality(:queues::text[]) <= 8 OR EXISTS (
        SELECT 1 FROM jobtable_queues AS p
        WHERE p.passed_over AND (  -- a scalar subquery: a seek per queue, never a join
            SELECT 1 FROM jobs  -- over the kind's jobs (as a planner with no statistics
            WHERE status = 'queued' AND kind = served.kind  -- chose); a range, ordered by
              AND queue >= p.name AND queue <= p.name  -- jobs_ready_in_queue's columns
            ORDER BY queue, priority, run_at, id LIMIT 1  -- (see _kind_queues): else a
            -- plan guessing most rows match would rather walk jobs_ready, or scan jobs
        ) IS NOT NULL
    )
), read_plainly(kind) AS MATERIALIZED (  -- decided before any row is read (or locked)
    SELECT served.kind FROM unnest(:kinds::text[]) AS served(kind)
    WHERE NOT EXISTS (SELECT 1 FROM apart WHERE apart.kind = served.kind)
), queues_of(kind, queue) AS (
    SELECT apart.kind, (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = apart.kind ORDER BY queue, priority, run_at, id LIMIT 1
    )
    FROM apart WHERE :queues::text[] IS NULL
    UNION ALL
    SELECT q.kind, (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = q.kind AND queue > q.queue
        ORDER BY queue, priority, run_at, id LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
), probed(kind, queue) AS (
    SELECT kind, queue FROM queues_of WHERE queue IS NOT NULL
    UNION
    SELECT apart.kind, listed.queue FROM apart CROSS JOIN unnest(:queues::text[]) AS listed(queue)
), picked AS MATERIALIZED (
    SELECT first.id FROM (
        SELECT first.id, first.priority, first.run_at
        FROM read_plainly AS served
        CROSS JOIN LATERAL (
            SELECT id, priority, run_at FROM jobs
            WHERE status = 'queued' AND kind = served.kind AND held_by IS NULL
              AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
            ORDER BY priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
        ) AS first
        UNION ALL
        SELECT first.id, first.priority, first.run_at
        FROM probed AS q
        CROSS JOIN LATERAL (
            SELECT id, priority, run_at FROM jobs
            WHERE status = 'queued' AND kind = q.kind AND held_by IS NULL
              AND queue >= q.queue AND queue <= q.queue  -- a range: see _kind_queues
            ORDER BY queue, priority, run_at, id LIMIT :limit FOR UPDATE SKIP LOCKED
        ) AS first
        WHERE NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = q.queue AND p.passed_over)
    ) AS first
    ORDER BY first.priority, first.run_at, first.id LIMIT :limit
)
