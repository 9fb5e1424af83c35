-- The concurrency limits every registered runner declared (JSON: kind -> n), for claims
-- to apply the smallest of each kind's.
SELECT limits FROM jobtable_runners WHERE limits IS NOT NULL
