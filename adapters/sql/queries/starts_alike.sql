-- Starts in the rate's window (after :since) of this job's kind, each marked whether it was
-- under the job's rate key, oldest first: what its detail says when a rate holds it back.
SELECT s.started_at, COALESCE(s.rate_key, '') = COALESCE(j.rate_key, '')
FROM jobs j JOIN jobtable_starts s ON s.kind = j.kind
WHERE j.id = :id AND s.started_at > :since
ORDER BY s.started_at
