-- Starts of a rate-limited kind in its window, per rate key, with the oldest of each
-- (when it leaves the window, that key may start one more), and the kind's latest start:
-- a claim never stamps its starts earlier (its clock may lag another runner's), so
-- windows stay in order.
SELECT rate_key, COUNT(*), MIN(started_at),
    (SELECT MAX(started_at) FROM jobtable_starts WHERE kind = :kind)
FROM jobtable_starts
WHERE kind = :kind AND started_at > :since
GROUP BY rate_key
