-- How many jobs of a limited kind run now, per limit key (NULL for a limit without one);
-- read from jobs_running_limits, which holds running rows only.
SELECT limit_key, COUNT(*) FROM jobs
WHERE status = 'running' AND kind = :kind
GROUP BY limit_key
