-- Starts of a rate-limited kind in its window, per rate key, with the oldest of each:
-- when it leaves the window, that key may start one more.
SELECT rate_key, COUNT(*), MIN(started_at) FROM jobtable_starts
WHERE kind = :kind AND started_at > :since
GROUP BY rate_key
