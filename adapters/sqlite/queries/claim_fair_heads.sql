-- Marks running under :runner_id the oldest due job at :priority of each of the first
-- :chunk of :fair_keys (a JSON array) in turn order (a key that never had a turn first,
-- then the oldest turn; fair_order.py), :limit of them at most, when :priority is still
-- the fair kind's first with a due job (else none); returns what running and settling
-- each needs, its fair key, that key's last turn and the kind's last turn (NULL: none
-- yet), as they stood before this claim. Which jobs are due is as in fair_heads.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    SELECT head.id
    FROM (
        SELECT listed.value AS fair_key, t.turn
        FROM json_each(:fair_keys) AS listed
        LEFT JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = listed.value
        WHERE :priority = (
            SELECT priority FROM jobs
            WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
              AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
              AND NOT EXISTS (
                  SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over
              )
            ORDER BY priority LIMIT 1
        )
        ORDER BY t.turn IS NOT NULL, t.turn, listed.value
        LIMIT :chunk
    ) AS k
    CROSS JOIN jobs AS head ON head.id IN (
        SELECT id FROM jobs INDEXED BY jobs_fair
        WHERE status = 'queued' AND fair_key IS NOT NULL AND kind = :kind
          AND priority = :priority AND fair_key = k.fair_key AND held_by IS NULL
          AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
        ORDER BY run_at, id LIMIT 1
    )
    ORDER BY k.turn IS NOT NULL, k.turn, k.fair_key
    LIMIT :limit
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context, fair_key,
    (SELECT turn FROM jobtable_fair_turns AS t WHERE t.kind = jobs.kind AND t.fair_key = jobs.fair_key),
    (SELECT max(turn) FROM jobtable_fair_turns WHERE kind = :kind)
