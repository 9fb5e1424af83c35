-- Due jobs of one limited kind in claim order, with their limit key, a page at a time:
-- the caller takes those whose kind (or key) has a free slot. None held ahead, none in a
-- paused queue; :queues as _pick_next takes it.
SELECT id, limit_key, rate_key, fair_key FROM jobs
WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
  AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
ORDER BY priority, run_at, id LIMIT :limit OFFSET :offset
