-- The ids of the first :limit due jobs in claim order (priority, then run_at, then id) of
-- the runner's kinds and queues, none held ahead by a runner. :kinds is a JSON array of
-- kind names, :queues one of queue names (NULL: every queue); paused and limited queues
-- (claimed apart) are passed over. Each kind is probed on its own (at most :limit rows
-- each), so the pick costs the same however many rows other kinds or the future hold:
-- - a kind with no due job in a passed-over queue, while the runner serves every queue
--   (or more than 8 by name), in jobs_ready (kind, priority, run_at, id): no row it
--   reads is passed over (a queue not served is, one by one);
-- - else (``apart``) each of its queues on its own, in jobs_ready_in_queue (kind, queue,
--   priority, run_at, id): the runner's queues, or when it serves every queue the kind's
--   queues, found one seek each (``queues_of``); those passed over are left out. So a
--   paused queue's backlog, or another runner's queue's, costs the claim nothing; what
--   it costs instead grows with the queues probed (hence 8 by name at most).
-- Which way each kind is read is decided once (``apart``: a seek per passed-over queue).
WITH RECURSIVE apart(kind) AS MATERIALIZED (
    SELECT served.value FROM json_each(:kinds) AS served
    WHERE json_array_length(:queues) <= 8 OR EXISTS (
        SELECT 1 FROM jobtable_queues AS p
        WHERE p.passed_over AND EXISTS (
            SELECT 1 FROM jobs INDEXED BY jobs_ready_in_queue
            WHERE status = 'queued' AND kind = served.value AND queue = p.name
        )
    )
),
queues_of(kind, queue) AS (
    SELECT apart.kind, (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = apart.kind ORDER BY queue LIMIT 1
    )
    FROM apart WHERE :queues IS NULL
    UNION ALL
    SELECT q.kind, (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = q.kind AND queue > q.queue ORDER BY queue LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
),
probed(kind, queue) AS (
    SELECT kind, queue FROM queues_of WHERE queue IS NOT NULL
    UNION
    SELECT apart.kind, listed.value FROM apart, json_each(:queues) AS listed
)
SELECT id FROM (
    SELECT first.id, first.priority, first.run_at
    FROM json_each(:kinds) AS served
    JOIN jobs AS first ON first.id IN (
        SELECT id FROM jobs INDEXED BY jobs_ready
        WHERE status = 'queued' AND kind = served.value AND held_by IS NULL
          AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
        ORDER BY priority, run_at, id LIMIT :limit
    )
    WHERE served.value NOT IN (SELECT kind FROM apart)
    UNION ALL
    SELECT first.id, first.priority, first.run_at
    FROM probed AS q
    JOIN jobs AS first ON first.id IN (
        SELECT id FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = q.kind AND queue = q.queue AND held_by IS NULL
        ORDER BY priority, run_at, id LIMIT :limit
    )
    WHERE NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = q.queue AND p.passed_over)
)
ORDER BY priority, run_at, id LIMIT :limit
