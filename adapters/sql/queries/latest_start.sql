-- The latest start recorded for a rate-limited kind: a claim never stamps its starts
-- earlier (its clock read may predate its wait for the lock), so windows stay in order.
SELECT MAX(started_at) FROM jobtable_starts WHERE kind = :kind
