-- 0018_limit_keys: a claim of a kind with a keyed limit passes over the keys at their
-- limit without reading their backlog. jobs_limit_keys lists the keyed jobs that wait, by
-- kind and key in claim order: a claim whose first pages are all held back reads the
-- kind's keys (one seek each) and the first jobs of each key with room. Only jobs with a
-- limit key are in it, so the hot path of other kinds pays nothing for it.
CREATE INDEX jobs_limit_keys ON jobs (kind, limit_key, priority, run_at, id)
    WHERE status = 'queued' AND limit_key IS NOT NULL;
-- Limit keys are many (customers) however few a statistics sample saw, as fair keys are
-- (0013): a planner must seek each key's first jobs, not walk the kind.
ALTER TABLE jobs ALTER COLUMN limit_key SET (n_distinct = -0.05);
