-- The queues a claim of one :kind reads, as ``probed`` (CTEs, after WITH RECURSIVE): the
-- runner's (:queues) that hold a due job of the kind (a seek each), or when it serves
-- every queue (NULL) the kind's queues with due jobs, found one seek each in
-- jobs_ready_in_queue (a loose index scan); paused and limited queues (passed over:
-- claimed apart) left out. The statement then reads each
-- queue on its own, by an index that puts the queue before the order it reads in, so a
-- passed-over queue's backlog, or an unserved one's, costs it nothing. Each read of a
-- queue names it by a range (queue >= q AND queue <= q, or a row comparison from it), not
-- an equality, and orders by it: PostgreSQL drops an ORDER BY column it sees equal to an
-- outer value, and then (statistics sampled while one queue held every row) would rather
-- walk jobs_ready past the other queues' jobs than seek the one queue's. The seeks here
-- order by the whole of jobs_ready_in_queue for the same reason.
queues_of(queue) AS (
    SELECT (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = :kind ORDER BY queue, priority, run_at, id LIMIT 1
    )
    WHERE :queues::text[] IS NULL
    UNION ALL
    SELECT (
        SELECT queue FROM jobs
        WHERE status = 'queued' AND kind = :kind AND queue > q.queue
        ORDER BY queue, priority, run_at, id LIMIT 1
    )
    FROM queues_of AS q WHERE q.queue IS NOT NULL
), probed(queue) AS MATERIALIZED (
    SELECT queue FROM queues_of WHERE queue IS NOT NULL
    UNION
    SELECT listed.queue FROM unnest(:queues::text[]) AS listed(queue)
    WHERE (  -- only those holding a due job of the kind: reads cost keys x queues
        SELECT 1 FROM jobs
        WHERE status = 'queued' AND kind = :kind
          AND queue >= listed.queue AND queue <= listed.queue
        ORDER BY queue, priority, run_at, id LIMIT 1
    ) IS NOT NULL
    EXCEPT
    SELECT name FROM jobtable_queues WHERE passed_over
)
