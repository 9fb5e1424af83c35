-- A fair kind's due jobs with no key at one priority, oldest first: after the keys' turns;
-- none held ahead. Each queue read (_kind_queues) is probed on its own in
-- jobs_ready_in_queue, and the probes merged by age.
WITH RECURSIVE {{kind_queues}}
SELECT j.id, j.limit_key, j.rate_key, j.fair_key
FROM probed
JOIN jobs AS j ON j.id IN (
    SELECT id FROM jobs INDEXED BY jobs_ready_in_queue
    WHERE status = 'queued' AND kind = :kind AND queue = probed.queue
      AND priority = :priority AND fair_key IS NULL AND held_by IS NULL
    ORDER BY run_at, id LIMIT :limit + :offset
)
ORDER BY j.run_at, j.id LIMIT :limit OFFSET :offset
