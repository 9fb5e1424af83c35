-- Marks running under :runner_id the oldest due job at :priority of each of the first
-- :chunk of :fair_keys in turn order (a key that never had a turn first, then the oldest
-- turn; fair_order.py), :limit of them at most, when :priority is still the fair kind's
-- first with a due job (else none); returns what running and settling each needs, its
-- fair key, that key's last turn and the kind's last turn (NULL: none yet), as they stood
-- before this claim. Which jobs are due is as in fair_heads. The heads are not locked as
-- they are read (FOR UPDATE would have the planner walk jobs_ready for each key): the
-- update checks again that each is still queued and held by none, after any write to it
-- in flight (no other claim of the kind runs meanwhile: it holds the kind's lock). A
-- run_at Python cannot hold comes back NULL, as in _claim_picked.
WITH picked AS MATERIALIZED (
    SELECT head.id
    FROM (
        SELECT listed.fair_key, t.turn
        FROM unnest(:fair_keys::text[]) AS listed(fair_key)
        LEFT JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = listed.fair_key
        WHERE :priority = (
            SELECT priority FROM jobs
            WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
              AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
              AND NOT EXISTS (
                  SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over
              )
            ORDER BY priority LIMIT 1
        )
        ORDER BY t.turn IS NOT NULL, t.turn, listed.fair_key COLLATE "C"
        LIMIT :chunk
    ) AS k
    CROSS JOIN LATERAL (
        SELECT id FROM jobs
        WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
          AND priority = :priority AND fair_key = k.fair_key AND held_by IS NULL
          AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
        ORDER BY run_at, id LIMIT 1
    ) AS head
    ORDER BY k.turn IS NOT NULL, k.turn, k.fair_key COLLATE "C"
    LIMIT :limit
)
{{claim_fair_picked}}
