-- When the queue's longest-waiting job due now fell due: the earliest due time among the
-- first OLDEST_LOOKED (1,000) jobs created of those it holds due now, read from
-- jobs_by_queue (the status predicates repeat the partial index's, as SQLite needs to use
-- it). Exact for up to that many; past them, a backlog's first-created jobs are the ones that
-- have waited longest but for a job due late (a delay, an operator's retry).
SELECT min(run_at) FROM (
    SELECT run_at FROM jobs
    WHERE queue = :queue AND status = 'queued' AND status <> 'running'
    ORDER BY status, id LIMIT 1000
) AS first_created
