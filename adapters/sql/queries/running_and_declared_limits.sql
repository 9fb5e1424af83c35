-- running_by_limit_key and registered_limits in one statement (a statement costs a
-- PostgreSQL client about 40 µs): how many jobs of a limited kind run now, per limit key,
-- and, in the rows with no count, the limits every registered runner declared (JSON:
-- kind -> n), read under the kind's lock.
SELECT limit_key, COUNT(*), NULL FROM jobs
WHERE status = 'running' AND kind = :kind
GROUP BY limit_key
UNION ALL
SELECT NULL, NULL, limits FROM jobtable_runners WHERE limits IS NOT NULL
