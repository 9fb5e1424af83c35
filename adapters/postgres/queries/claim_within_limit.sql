-- Marks running under :runner_id the first due jobs of one kind under a limit without a
-- key, in claim order: :limit of them at most, and no more than the limit :n less the
-- kind's running jobs, counted here (after the claim took the kind's lock, so one
-- statement counts and claims); returns what running and settling each needs. Which jobs
-- are due is as in _pick_next.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id
    LIMIT GREATEST(0, LEAST(:limit, :n - (
        SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
    )))
    FOR UPDATE SKIP LOCKED
)
{{claim_picked}}
