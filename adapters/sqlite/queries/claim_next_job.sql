-- Marks the first due job in claim order (priority, then run_at, then id) of the
-- runner's kinds and queues running under :runner_id, and returns what running and
-- settling it needs; no row when none is due. :kinds is a JSON array of kind names,
-- :queues one of queue names (NULL: every queue); paused queues are passed over.
-- Each kind is probed on its own in the jobs_ready index, so the claim costs the
-- same however many rows other kinds or the future hold. A paused queue
-- is checked by its key per candidate (NOT EXISTS): NOT IN over a subquery would be
-- built again for each kind probed, and cost more than the rest of the claim.
UPDATE jobs
SET status = 'running', started_at = :now, updated_at = :now,
    claimed_by = :runner_id, attempt = attempt + 1
WHERE id = (
    SELECT first.id
    FROM json_each(:kinds) AS served
    JOIN jobs AS first ON first.id = (
        SELECT id FROM jobs
        WHERE status = 'queued' AND kind = served.value
          AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
          AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.paused)
        ORDER BY priority, run_at, id LIMIT 1
    )
    ORDER BY first.priority, first.run_at, first.id LIMIT 1
)
RETURNING id, kind, payload, attempt, max_attempts, retry, timeout, result, run_at
