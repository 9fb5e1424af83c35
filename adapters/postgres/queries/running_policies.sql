-- The running jobs of one owner, locked, with what settling each by its stored policy needs.
SELECT id, attempt, max_attempts, retry FROM jobs
WHERE status = 'running' AND claimed_by IS NOT DISTINCT FROM %(owner)s
FOR UPDATE
