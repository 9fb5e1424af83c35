-- Marks running under :runner_id the first due jobs of one limited kind, in claim order,
-- :limit of them at most, and only as many as its limit or rate has room for, counted
-- here (after the claim took the kind's lock, so one statement counts and claims), by
-- :room_of:
-- - 'limit' (a limit :n without a key): :n less the kind's running jobs;
-- - 'keyed' (a limit :n with a key): all :limit if the busiest key (jobs with no key
--   share one) has room for them all, else none;
-- - 'rate' (a rate of :n without a key): :n less its starts in the window, after :since:
--   :kept that the claiming store kept from before :latest (rate_windows.py), and those
--   stamped at or after :latest, counted here.
-- Returns what running and settling each needs, as _claim_picked does. Which jobs are due
-- is as in _pick_next. The planner cannot tell how many the LIMIT takes: the update finds
-- them by id (= ANY), never by a join it might plan as a scan of jobs.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
      AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
    ORDER BY priority, run_at, id
    LIMIT CASE :room_of::text
        WHEN 'keyed' THEN (
            CASE WHEN :n - (
                SELECT COALESCE(MAX(running), 0) FROM (
                    SELECT COUNT(*) AS running FROM jobs
                    WHERE status = 'running' AND kind = :kind GROUP BY limit_key
                ) AS per_key
            ) >= :limit THEN :limit ELSE 0 END
        )
        WHEN 'rate' THEN GREATEST(0, LEAST(:limit, :n - :kept::bigint - (
            SELECT COUNT(*) FROM jobtable_starts
            WHERE kind = :kind AND started_at >= :latest::timestamptz
              AND started_at > :since::timestamptz
        )))
        ELSE GREATEST(0, LEAST(:limit, :n - (
            SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
        )))
    END
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = jobs.attempt + 1
WHERE jobs.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempt, jobs.max_attempts, jobs.retry,
    jobs.timeout, jobs.result,
    CASE WHEN jobs.run_at >= '0001-01-02' AND jobs.run_at < '9999-12-30' THEN jobs.run_at END,
    jobs.priority, jobs.queue, jobs.trace_context
