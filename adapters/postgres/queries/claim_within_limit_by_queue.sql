-- claim_within_limit, reading each queue on its own (adapters/sql/queue_reads.py): the
-- queues read (_kind_queues) probed in jobs_ready_in_queue, each locking :page rows at
-- most, and the probes merged in claim order and cut to :page.
WITH RECURSIVE {{kind_queues}}, due AS MATERIALIZED (
    SELECT first.id, first.priority, first.run_at, first.limit_key FROM probed
    CROSS JOIN LATERAL (
        SELECT id, priority, run_at, limit_key FROM jobs
        WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
          AND queue >= probed.queue AND queue <= probed.queue
        ORDER BY queue, priority, run_at, id LIMIT :page
        FOR UPDATE SKIP LOCKED
    ) AS first
    ORDER BY first.priority, first.run_at, first.id LIMIT :page
), picked AS MATERIALIZED (
    {{within_key_limits}}
)
{{claim_picked}},
    (SELECT COUNT(*) FROM due)
