-- A rate-limited kind's starts stamped after :since, in stamp order (a claim's first look
-- at its window).
SELECT rate_key, started_at FROM jobtable_starts
WHERE kind = :kind AND started_at > :since
ORDER BY started_at
