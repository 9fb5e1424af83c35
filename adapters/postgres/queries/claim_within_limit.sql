-- Marks running under :runner_id the first due jobs of one limited kind, in claim order,
-- :limit of them at most, and only as many as its limit and rate have room for, counted
-- here (after the claim took the kind's lock, so one statement counts and claims;
-- _limit_room).
-- Returns what running and settling each needs (_claim_picked, which finds them by id: the
-- planner cannot tell how many the LIMIT takes). Which jobs are due is as in _pick_next.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id
    LIMIT ({{limit_room}})
    FOR UPDATE SKIP LOCKED
)
{{claim_picked}}
