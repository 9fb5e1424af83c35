-- A fair claim's second half: the rows ``picked`` marked running under :runner_id, each
-- checked again to be queued and held by none, with what running and settling each needs,
-- its fair key, that key's last turn and the kind's last turn (claim_fair_heads). Found by
-- id (as in _claim_picked); the status is checked through coalesce so that no partial
-- index on it is the way in: on a table younger than its statistics the planner took
-- jobs_ready_in_queue for a few rows and read every queued job (6,000: 1.3 ms, not 0.4).
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = jobs.attempt + 1
WHERE jobs.id = ANY(ARRAY(SELECT id FROM picked))
  AND coalesce(jobs.status, '') = 'queued' AND jobs.held_by IS NULL
RETURNING jobs.id, jobs.kind, jobs.payload, jobs.attempt, jobs.max_attempts, jobs.retry,
    jobs.timeout, jobs.result,
    CASE WHEN jobs.run_at >= '0001-01-02' AND jobs.run_at < '9999-12-30' THEN jobs.run_at END,
    jobs.priority, jobs.queue, jobs.trace_context, jobs.fair_key,
    (SELECT t.turn FROM jobtable_fair_turns AS t WHERE t.kind = jobs.kind AND t.fair_key = jobs.fair_key),
    (SELECT max(t.turn) FROM jobtable_fair_turns AS t WHERE t.kind = :kind)
