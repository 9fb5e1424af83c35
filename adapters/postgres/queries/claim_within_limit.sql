-- Marks running under :runner_id the first due jobs of one limited kind that its limit and
-- rate have room for, counted here (after the claim took the kind's lock, so one
-- statement counts and claims), in claim order, :limit of them at most: of the first
-- :page due jobs, locked (_within_key_limits). Returns what running and settling each
-- needs (_claim_picked, which finds them by id: the planner cannot tell how many the
-- LIMIT takes), and then how many due jobs it read (a claim that took fewer than it
-- wanted reads on only when that is :page). Which jobs are due is as in _pick_next.
WITH due AS MATERIALIZED (
    SELECT id, priority, run_at, limit_key FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id
    LIMIT :page
    FOR UPDATE SKIP LOCKED
), picked AS MATERIALIZED (
    {{within_key_limits}}
)
{{claim_picked}},
    (SELECT COUNT(*) FROM due)
