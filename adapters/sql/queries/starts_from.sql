-- A rate-limited kind's starts stamped at or after :since (the latest a claim saw), in
-- stamp order: those recorded since it last looked, and those it saw stamped then.
SELECT rate_key, started_at FROM jobtable_starts
WHERE kind = :kind AND started_at >= :since
ORDER BY started_at
