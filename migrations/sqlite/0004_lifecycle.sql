-- 0004_lifecycle: queues, priorities, schedules, retries, timeouts, unique keys,
-- cancellation and every attempt's record.
--
-- A job due later is stored 'scheduled' and shown as queued: every 'queued'
-- row is due, so the claim index holds only what may run now, however many
-- jobs wait for the future. Runners move due rows to 'queued' (promotion).
-- SQLite cannot change a CHECK in place, so the table is rebuilt.
CREATE TABLE jobs_new (
    id                 TEXT NOT NULL PRIMARY KEY,
    kind               TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'scheduled', 'running', 'succeeded', 'failed')),
    payload            TEXT NOT NULL, -- JSON
    result             TEXT,          -- JSON: the latest partial or the final result
    error              TEXT,          -- a failure code, only on a failed job
    started_at         TEXT,
    finished_at        TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    claimed_by         TEXT,          -- the runner id of the latest claim
    attempt            INTEGER NOT NULL DEFAULT 0,
    max_attempts       INTEGER NOT NULL DEFAULT 1,
    queue              TEXT NOT NULL DEFAULT 'default',
    priority           INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 9),
    -- When it is due; an immediate job's creation time. The default (the same format as
    -- the stamps jobtable writes) serves writers that do not know the column.
    run_at             TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now')),
    retry              TEXT,          -- JSON retry policy; NULL: the defaults
    timeout            REAL,          -- seconds an attempt may run; NULL: no limit
    unique_key         TEXT,          -- with kind, unique among rows that hold one
    unique_while_active INTEGER NOT NULL DEFAULT 1, -- let the key go when the job finishes
    cancel_requested   INTEGER NOT NULL DEFAULT 0,
    last_code          TEXT,          -- the code the latest attempt ended with
    attempts_log       TEXT           -- JSON array: one object per ended attempt
);

INSERT INTO jobs_new (
    id, kind, status, payload, result, error, started_at, finished_at, created_at, updated_at,
    claimed_by, attempt, max_attempts, run_at
)
SELECT id, kind, status, payload, result, error, started_at, finished_at, created_at, updated_at,
       claimed_by, attempt, max_attempts, created_at
FROM jobs;

DROP TABLE jobs;

ALTER TABLE jobs_new RENAME TO jobs;

-- A claim probes each kind it serves for its first row in claim order: only due rows
-- are 'queued', so the probe costs the same at any depth.
CREATE INDEX jobs_ready ON jobs (kind, priority, run_at, id) WHERE status = 'queued';

-- Promotion and the earliest due time read the scheduled rows by due time.
CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE status = 'scheduled';

-- A sweep reads the owners of running jobs.
CREATE INDEX jobs_running ON jobs (claimed_by) WHERE status = 'running';

-- One job per kind and key: a second enqueue finds the first (INSERT ... ON CONFLICT).
CREATE UNIQUE INDEX jobs_unique ON jobs (kind, unique_key) WHERE unique_key IS NOT NULL;

-- Paused queues, seen by every process; a queue without a row runs.
CREATE TABLE jobtable_queues (
    name       TEXT NOT NULL PRIMARY KEY,
    paused     INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);

-- Periodic schedules by name, with when each was first seen: missed ticks before
-- that never run (a first deploy runs nothing from the past).
CREATE TABLE jobtable_schedules (
    name       TEXT NOT NULL PRIMARY KEY,
    first_seen TEXT NOT NULL
);

-- Idempotency-Key: each key with its request's hash and, once answered, the answer
-- (kept 24 h whatever the jobs' retention).
CREATE TABLE jobtable_idempotency (
    key          TEXT NOT NULL PRIMARY KEY,
    request_hash TEXT NOT NULL,
    status       INTEGER,        -- NULL while the first request is in flight
    body         TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX jobtable_idempotency_age ON jobtable_idempotency (created_at);
