-- How many of a limited queue's jobs run now (jobs_running holds running rows only).
SELECT COUNT(*) FROM jobs WHERE status = 'running' AND queue = :queue
