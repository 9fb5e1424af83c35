-- The queues a claim of one :kind reads, as ``probed`` (CTEs, after WITH RECURSIVE): the
-- runner's (:queues, a JSON array) that hold a due job of the kind (a seek each), or when
-- it serves every queue (NULL) the kind's queues with due jobs, found one seek each in
-- jobs_ready_in_queue (a loose index scan); paused and limited queues (passed over:
-- claimed apart) left out. The statement then reads each
-- queue on its own, by an index that puts the queue before the order it reads in, so a
-- passed-over queue's backlog, or an unserved one's, costs it nothing.
queues_of(queue) AS (
    SELECT (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = :kind ORDER BY queue LIMIT 1
    )
    WHERE :queues IS NULL
    UNION ALL
    SELECT (
        SELECT queue FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = :kind AND queue > q.queue ORDER BY queue LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
),
probed(queue) AS MATERIALIZED (
    SELECT queue FROM queues_of WHERE queue IS NOT NULL
    UNION
    SELECT listed.value FROM json_each(:queues) AS listed
    WHERE EXISTS (  -- only those holding a due job of the kind: reads cost keys x queues
        SELECT 1 FROM jobs INDEXED BY jobs_ready_in_queue
        WHERE status = 'queued' AND kind = :kind AND queue = listed.value
    )
    EXCEPT
    SELECT name FROM jobtable_queues WHERE passed_over
)
