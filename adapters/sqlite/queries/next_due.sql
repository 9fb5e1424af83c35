-- Scheduled jobs' due times, earliest first: the caller takes the first it can read
-- (a time written by a tool may not parse, and must not hide the jobs due after it).
SELECT run_at FROM jobs WHERE status = 'scheduled' ORDER BY run_at
