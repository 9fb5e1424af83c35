-- Unfinished jobs by queue, kind and stored status, read at each metrics scrape. One
-- select per status, so each reads its own partial index (jobs_ready, jobs_scheduled,
-- jobs_running) and never a finished row, however many the table holds.
SELECT queue, kind, 'queued', count(*) FROM jobs WHERE status = 'queued' GROUP BY queue, kind
UNION ALL
SELECT queue, kind, 'scheduled', count(*) FROM jobs WHERE status = 'scheduled' GROUP BY queue, kind
UNION ALL
SELECT queue, kind, 'running', count(*) FROM jobs WHERE status = 'running' GROUP BY queue, kind
