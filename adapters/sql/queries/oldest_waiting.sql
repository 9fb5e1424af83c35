-- When the queue's oldest (first created) job due now fell due: one seek of jobs_by_queue
-- (the status predicates repeat the partial index's, as SQLite needs to use it).
SELECT run_at FROM jobs
WHERE queue = :queue AND status = 'queued' AND status <> 'running'
ORDER BY status, id LIMIT 1
