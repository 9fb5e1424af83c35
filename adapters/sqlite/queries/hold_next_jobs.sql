-- Holds the jobs _pick_next picks ahead for :runner_id's workers: they stay queued (no
-- status change, so no history and no index of a status is touched) until a worker
-- starts one (start_held_job). Returns what claim_next_job returns, with the attempt
-- the start will make it.
UPDATE jobs SET held_by = :runner_id
WHERE id IN ({{pick_next}})
RETURNING id, kind, payload, attempt + 1, max_attempts, retry, timeout, result, run_at, priority, queue, trace_context
