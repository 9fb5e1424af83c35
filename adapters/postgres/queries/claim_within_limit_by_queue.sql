-- claim_within_limit, reading each queue on its own (adapters/sql/queue_reads.py): the
-- queues read (_kind_queues) probed in jobs_ready_in_queue, each locking :limit rows at
-- most (a parameter: a LIMIT the planner cannot read, as ``room``, it guesses at a
-- tenth of the table), and the probes merged in claim order and cut to ``room``
-- (_limit_room).
WITH RECURSIVE {{kind_queues}}, room(n) AS MATERIALIZED (
    SELECT {{limit_room}}
), picked AS MATERIALIZED (
    SELECT first.id FROM probed
    CROSS JOIN LATERAL (
        SELECT id, priority, run_at FROM jobs
        WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
          AND queue >= probed.queue AND queue <= probed.queue
        ORDER BY queue, priority, run_at, id LIMIT :limit
        FOR UPDATE SKIP LOCKED
    ) AS first
    ORDER BY first.priority, first.run_at, first.id LIMIT (SELECT n FROM room)
)
{{claim_picked}}
