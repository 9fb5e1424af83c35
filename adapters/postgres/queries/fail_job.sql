-- Fail: failed for good. The last partial result is kept; the attempt that ended it is
-- told by the row itself, not logged. A row found running has had at least one attempt:
-- one a tool or an older version wrote with none counts one.
UPDATE jobs
SET status = 'failed', error = %(code)s, last_code = %(code)s, finished_at = %(now)s,
    updated_at = %(now)s, cancel_requested = false, attempt = GREATEST(attempt, 1),
    unique_key = CASE WHEN unique_while_active THEN NULL ELSE unique_key END
WHERE id = %(id)s AND status = 'running' AND claimed_by IS NOT DISTINCT FROM %(runner_id)s
  AND attempt = %(attempt)s
