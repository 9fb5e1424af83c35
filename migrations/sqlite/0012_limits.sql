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
    started_at TEXT NOT NULL
);
CREATE INDEX jobtable_starts_by_kind ON jobtable_starts (kind, started_at);
-- A kind registered with fair_key=... stores each job's key in fair_key; within a priority
-- the keys take turns, the one whose turn came longest ago (or never) first, as
-- jobtable_fair_turns numbers them (a count per kind, not a time: clocks may tie). jobs_fair finds each key's oldest due job by an index seek.
ALTER TABLE jobs ADD COLUMN fair_key TEXT;
CREATE INDEX jobs_fair ON jobs (kind, priority, fair_key, run_at, id)
    WHERE status = 'queued' AND fair_key IS NOT NULL;
CREATE TABLE jobtable_fair_turns (
    kind     TEXT NOT NULL,
    fair_key TEXT NOT NULL,
    turn     BIGINT NOT NULL,
    PRIMARY KEY (kind, fair_key)
);
