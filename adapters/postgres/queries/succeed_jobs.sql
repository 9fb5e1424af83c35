-- Succeed, for one outcome or a whole batch in one statement: each row of the arrays is
-- one job's id, the claim it must still run under (runner and attempt: the fence) and
-- its result. The attempt that finished the job is not logged: the row itself says it.
-- Returns the ids it changed; a stale claim changes nothing.
UPDATE jobs
SET status = 'succeeded', result = done.result, finished_at = %(now)s, updated_at = %(now)s,
    last_code = NULL, cancel_requested = false,
    unique_key = CASE WHEN jobs.unique_while_active THEN NULL ELSE jobs.unique_key END
FROM unnest(%(ids)s::text[], %(runners)s::text[], %(attempts)s::int[], %(results)s::text[])
    AS done(id, runner_id, attempt, result)
WHERE jobs.id = done.id AND jobs.status = 'running' AND jobs.claimed_by = done.runner_id
  AND jobs.attempt = done.attempt
RETURNING jobs.id
