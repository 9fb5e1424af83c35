-- The running jobs of one owner, with what settling each by its stored policy needs. A row
-- found running has had at least one attempt: one a tool or an older version wrote with
-- none is counted as one here, so its kind's budget holds.
UPDATE jobs SET attempt = max(attempt, 1)
WHERE status = 'running' AND claimed_by IS :owner
RETURNING id, attempt, max_attempts, retry
