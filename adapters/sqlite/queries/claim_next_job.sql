-- Marks the first :limit due jobs in claim order (priority, then run_at, then id) of
-- the runner's kinds and queues running under :runner_id, and returns what running
-- and settling each needs; no row when none is due. :kinds is a JSON array of kind
-- names, :queues one of queue names (NULL: every queue); paused queues are passed
-- over. Each kind is probed on its own in the jobs_ready index (at most :limit rows
-- each), so the claim costs the same however many rows other kinds or the future
-- hold. A paused queue is checked by its key per candidate (NOT EXISTS): NOT IN over
-- a subquery would be built again for each kind probed, and cost more than the rest
-- of the claim. One statement claims a whole batch: one transaction, one fsync.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id IN (
    SELECT first.id
    FROM json_each(:kinds) AS served
    JOIN jobs AS first ON first.id IN (
        SELECT id FROM jobs
        WHERE status = 'queued' AND kind = served.value
          AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
        ORDER BY priority, run_at, id LIMIT :limit
    )
    ORDER BY first.priority, first.run_at, first.id LIMIT :limit
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at, priority
