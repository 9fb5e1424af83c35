-- claim_fair_heads, reading each queue on its own (adapters/sql/queue_reads.py): a key's
-- head is the oldest of its first job in each queue read (_kind_queues, one seek per key
-- and queue in jobs_fair_in_queue), and :priority must be the first after :after (-1: of
-- all) with a due job in them (_first_priority). The CTEs inside the IN: written before
-- the UPDATE, they made a claim seven times as slow (350 µs against 50).
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    WITH RECURSIVE {{kind_queues}}
    SELECT id FROM (
        SELECT head.id, k.fair_key, k.turn,
            row_number() OVER (PARTITION BY k.fair_key ORDER BY head.run_at, head.id) AS place
        FROM (
            SELECT listed.value AS fair_key, t.turn
            FROM json_each(:fair_keys) AS listed
            LEFT JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = listed.value
            WHERE :priority = ({{first_priority}})
            ORDER BY t.turn IS NOT NULL, t.turn, listed.value
            LIMIT :chunk
        ) AS k
        CROSS JOIN probed
        CROSS JOIN jobs AS head ON head.id IN (
            SELECT id FROM jobs INDEXED BY jobs_fair_in_queue
            WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
              AND priority = :priority AND fair_key = k.fair_key AND queue = probed.queue
              AND held_by IS NULL
            ORDER BY run_at, id LIMIT 1
        )
    )
    WHERE place = 1
    ORDER BY turn IS NOT NULL, turn, fair_key
    LIMIT :limit
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context, fair_key,
    (SELECT turn FROM jobtable_fair_turns AS t WHERE t.kind = jobs.kind AND t.fair_key = jobs.fair_key),
    (SELECT max(turn) FROM jobtable_fair_turns WHERE kind = :kind)
