-- claim_within_limit, reading each queue on its own (adapters/sql/queue_reads.py): the
-- queues read (_kind_queues) probed in jobs_ready_in_queue, :page rows at most each, and
-- the probes merged in claim order. The CTEs inside the IN: written before the UPDATE,
-- they made the claim seven times as slow (350 µs against 50).
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    WITH RECURSIVE {{kind_queues}}, due AS (
        SELECT first.id, first.priority, first.run_at, first.limit_key FROM probed
        JOIN jobs AS first ON first.id IN (
            SELECT id FROM jobs INDEXED BY jobs_ready_in_queue
            WHERE status = 'queued' AND kind = :kind AND queue = probed.queue AND held_by IS NULL
            ORDER BY priority, run_at, id LIMIT :page
        )
        ORDER BY first.priority, first.run_at, first.id LIMIT :page
    )
    {{within_key_limits}}
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context, :page
