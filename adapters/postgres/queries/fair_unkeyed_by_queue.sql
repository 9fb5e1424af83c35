-- A fair kind's due jobs with no key at one priority, oldest first: after the keys' turns;
-- none held ahead. Each queue read (_kind_queues) is probed on its own in
-- jobs_ready_in_queue, and the probes merged by age.
WITH RECURSIVE {{kind_queues}}
SELECT j.id, j.limit_key, j.rate_key, j.fair_key
FROM probed
CROSS JOIN LATERAL (
    SELECT id, limit_key, rate_key, fair_key, run_at FROM jobs
    WHERE status = 'queued' AND kind = :kind AND fair_key IS NULL AND held_by IS NULL
      AND (queue, priority) >= (probed.queue, :priority::smallint)
      AND (queue, priority) <= (probed.queue, :priority::smallint)
    ORDER BY queue, priority, run_at, id LIMIT :limit::bigint + :offset::bigint
) AS j
ORDER BY j.run_at, j.id LIMIT :limit OFFSET :offset
