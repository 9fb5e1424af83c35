-- Due jobs of one limited kind in claim order, with their limit key, a page at a time:
-- the caller takes those whose kind (or key) has a free slot. None held ahead, none in a
-- paused queue; :queues as _pick_next takes it. No row lock: claims of the kind take
-- turns (lock_limited_kind), and the claim locks and checks each row again.
SELECT id, limit_key, rate_key, fair_key FROM jobs
WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
  AND (:queues::text[] IS NULL OR queue = ANY(:queues::text[]))
  AND NOT EXISTS (SELECT 1 FROM jobtable_queues p WHERE p.name = jobs.queue AND p.passed_over)
ORDER BY priority, run_at, id LIMIT :limit OFFSET :offset
