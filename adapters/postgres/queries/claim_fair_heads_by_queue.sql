-- claim_fair_heads, reading each queue on its own (adapters/sql/queue_reads.py): a key's
-- head is the oldest of its first job in each queue read (_kind_queues, one seek per key
-- and queue in jobs_fair_in_queue), and :priority must be the first after :after (-1: of
-- all) with a due job in them (_first_priority). Unlocked as they are read, as there.
WITH RECURSIVE {{kind_queues}}, picked AS MATERIALIZED (
    SELECT heads.id FROM (
        SELECT head.id, k.fair_key, k.turn,
            row_number() OVER (PARTITION BY k.fair_key ORDER BY head.run_at, head.id) AS place
        FROM (
            SELECT listed.fair_key, t.turn
            FROM unnest(:fair_keys::text[]) AS listed(fair_key)
            LEFT JOIN jobtable_fair_turns AS t
                ON t.kind = :kind AND t.fair_key = listed.fair_key
            WHERE :priority = ({{first_priority}})
            ORDER BY t.turn IS NOT NULL, t.turn, listed.fair_key COLLATE "C"
            LIMIT :chunk
        ) AS k
        CROSS JOIN probed
        CROSS JOIN LATERAL (
            SELECT id, run_at FROM jobs
            WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
              AND priority = :priority AND fair_key = k.fair_key AND held_by IS NULL
              AND queue >= probed.queue AND queue <= probed.queue
            ORDER BY queue, run_at, id LIMIT 1
        ) AS head
    ) AS heads
    WHERE heads.place = 1
    ORDER BY heads.turn IS NOT NULL, heads.turn, heads.fair_key COLLATE "C"
    LIMIT :limit
)
{{claim_fair_picked}}
