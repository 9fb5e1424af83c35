-- 0012_limits: a kind registered with Limit(n, key=...) stores each job's key, computed
-- from its payload at enqueue, in limit_key. A claim of a limited kind counts the jobs of
-- that kind (and key) running now; only running rows are in jobs_running_limits, so the
-- count costs the same however deep the queue is.
ALTER TABLE jobs ADD COLUMN limit_key TEXT;
CREATE INDEX jobs_running_limits ON jobs (kind, limit_key) WHERE status = 'running';
-- Each live runner's registered limits (JSON: kind -> n): a claim applies the smallest of
-- a kind's, so a rolling deploy that lowers a limit holds from its first new runner.
ALTER TABLE jobtable_runners ADD COLUMN limits TEXT;
-- A kind registered with Rate(n, per=..., key=...) stores each job's rate key in rate_key,
-- and every start of such a job in jobtable_starts (its kind, key and time): a claim counts
-- the starts in the window and prunes those older.
ALTER TABLE jobs ADD COLUMN rate_key TEXT;
CREATE TABLE jobtable_starts (
    kind       TEXT NOT NULL,
    rate_key   TEXT,
    started_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX jobtable_starts_by_kind ON jobtable_starts (kind, started_at);
