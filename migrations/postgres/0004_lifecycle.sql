-- 0004_lifecycle: queues, priorities, schedules, retries, timeouts, unique keys,
-- cancellation and every attempt's record.
--
-- A job due later is stored 'scheduled' and shown as queued: every 'queued'
-- row is due, so the claim index holds only what may run now, however many
-- jobs wait for the future. Runners move due rows to 'queued' (promotion).
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
    CHECK (status IN ('queued', 'scheduled', 'running', 'succeeded', 'failed'));
ALTER TABLE jobs ADD COLUMN queue text NOT NULL DEFAULT 'default';
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 0
    CHECK (priority BETWEEN 0 AND 9);
ALTER TABLE jobs ADD COLUMN run_at timestamptz;
UPDATE jobs SET run_at = created_at;
ALTER TABLE jobs ALTER COLUMN run_at SET NOT NULL;
ALTER TABLE jobs ALTER COLUMN run_at SET DEFAULT now();  -- for writers that do not know it
ALTER TABLE jobs ADD COLUMN retry text;                -- JSON retry policy; NULL: the defaults
ALTER TABLE jobs ADD COLUMN timeout double precision;  -- seconds an attempt may run
ALTER TABLE jobs ADD COLUMN unique_key text;
ALTER TABLE jobs ADD COLUMN unique_while_active boolean NOT NULL DEFAULT true;
ALTER TABLE jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
ALTER TABLE jobs ADD COLUMN last_code text;            -- the code the latest attempt ended with
ALTER TABLE jobs ADD COLUMN attempts_log jsonb;        -- one object per ended attempt

-- A claim probes each kind it serves for its first row in claim order: only due rows
-- are 'queued', so the probe costs the same at any depth.
DROP INDEX IF EXISTS jobs_queued;
CREATE INDEX jobs_ready ON jobs (kind, priority, run_at, id) WHERE status = 'queued';

-- Promotion and the earliest due time read the scheduled rows by due time.
CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE status = 'scheduled';

-- One job per kind and key: a second enqueue finds the first (INSERT ... ON CONFLICT).
CREATE UNIQUE INDEX jobs_unique ON jobs (kind, unique_key) WHERE unique_key IS NOT NULL;

-- Paused queues, seen by every process; a queue without a row runs.
CREATE TABLE jobtable_queues (
    name       text NOT NULL PRIMARY KEY,
    paused     boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL
);

-- Periodic schedules by name, with when each was first seen: missed ticks before
-- that never run (a first deploy runs nothing from the past).
CREATE TABLE jobtable_schedules (
    name       text NOT NULL PRIMARY KEY,
    first_seen timestamptz NOT NULL
);

-- Idempotency-Key: each key with its request's hash and, once answered, the answer
-- (kept 24 h whatever the jobs' retention).
CREATE TABLE jobtable_idempotency (
    key          text NOT NULL PRIMARY KEY,
    request_hash text NOT NULL,
    status       integer,        -- NULL while the first request is in flight
    body         text,
    created_at   timestamptz NOT NULL
);
CREATE INDEX jobtable_idempotency_age ON jobtable_idempotency (created_at);
