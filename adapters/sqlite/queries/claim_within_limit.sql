-- Marks running under :runner_id the first due jobs of one limited kind that its limit and
-- rate have room for, counted here (one statement counts and claims), in claim order,
-- :limit of them at most: of the first :page due jobs (_within_key_limits). Returns what
-- running and settling each needs, and then :page (a claim that took fewer than it
-- wanted reads on when its page may have held more: SQLite cannot count it here). Which
-- jobs are due is as in _pick_next.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    WITH due AS (
        SELECT id, priority, run_at, limit_key FROM jobs
        WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
          AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
        ORDER BY priority, run_at, id
        LIMIT :page
    )
    {{within_key_limits}}
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context, :page
