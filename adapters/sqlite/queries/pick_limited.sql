-- Due jobs of one limited kind in claim order after the position (:after_priority,
-- :after_run_at, :after_id), with their keys and sort columns, :limit at a time: the
-- caller takes those whose kind (or key) has a free slot. Jobs whose limit key is in
-- :full (a JSON array), and those with no key when :null_full, are at their limit and
-- passed over here; when :only_null, every job with a key is. None held ahead, none in a
-- paused queue; :queues as _pick_next takes it. A position, not an OFFSET: each page
-- starts where the last ended (jobs_ready).
SELECT id, limit_key, rate_key, fair_key, priority, run_at FROM jobs
WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
  AND (priority, run_at, id) > (:after_priority, :after_run_at, :after_id)
  AND (limit_key IS NULL OR limit_key NOT IN (SELECT value FROM json_each(:full)))
  AND NOT (limit_key IS NULL AND :null_full)
  AND (limit_key IS NULL OR NOT :only_null)
  AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
ORDER BY priority, run_at, id LIMIT :limit
