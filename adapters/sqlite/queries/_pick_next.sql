-- The ids of the first :limit due jobs in claim order (priority, then run_at, then id) of
-- the runner's kinds and queues, none held ahead by a runner. :kinds is a JSON array of
-- kind names, :queues one of queue names (NULL: every queue); paused and limited queues
-- (claimed apart) are passed over. Each kind is probed on its own (at most :limit rows
-- each), so the pick costs the same however many rows other kinds or the future hold:
-- - while the runner serves every queue and none is passed over, in jobs_ready (kind,
--   priority, run_at, id);
-- - else each of the kind's queues on its own, in jobs_ready_in_queue (kind, queue,
--   priority, run_at, id), the queues found one seek each (``queues_of``), those passed
--   over or not served left out: a paused queue's backlog, or another runner's queue's,
--   costs the claim nothing.
-- Which branch runs is decided once, before either reads a row.
WITH RECURSIVE queues_of(kind, queue) AS (
    SELECT served.value, (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = served.value ORDER BY queue LIMIT 1
    )
    FROM json_each(:kinds) AS served
    WHERE :queues IS NOT NULL OR EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
    UNION ALL
    SELECT q.kind, (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = q.kind AND queue > q.queue ORDER BY queue LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
)
SELECT id FROM (
    SELECT first.id, first.priority, first.run_at
    FROM json_each(:kinds) AS served
    JOIN jobs AS first ON first.id IN (
        SELECT id FROM jobs INDEXED BY jobs_ready
        WHERE status = 'queued' AND kind = served.value AND held_by IS NULL
        ORDER BY priority, run_at, id LIMIT :limit
    )
    WHERE :queues IS NULL AND NOT EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
    UNION ALL
    SELECT first.id, first.priority, first.run_at
    FROM queues_of AS q
    JOIN jobs AS first ON first.id IN (
        SELECT id FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = q.kind AND queue = q.queue AND held_by IS NULL
        ORDER BY priority, run_at, id LIMIT :limit
    )
    WHERE q.queue IS NOT NULL
      AND (:queues IS NULL OR q.queue IN (SELECT value FROM json_each(:queues)))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = q.queue AND p.passed_over)
)
ORDER BY priority, run_at, id LIMIT :limit
