-- 0002_jobs_status: statuses become queued, running, succeeded, failed; every
-- claim records its runner and attempt; claims use a partial index.
--
-- SQLite cannot change a CHECK in place, so the table is rebuilt: create the
-- new table, copy every row, drop the old one and rename. Rows written under
-- the reference's values are mapped (pending -> queued, done -> succeeded),
-- so the copy cannot fail on an existing database.
CREATE TABLE jobs_new (
    id          TEXT NOT NULL PRIMARY KEY,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    payload     TEXT NOT NULL, -- JSON
    result      TEXT,          -- JSON: the latest partial or the final result
    error       TEXT,          -- a failure code, only on a failed job
    started_at  TEXT,
    finished_at TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    claimed_by  TEXT,          -- the runner id of the latest claim
    attempt     INTEGER NOT NULL DEFAULT 0 -- how many times the job was claimed
);

INSERT INTO jobs_new (id, kind, status, payload, result, error, started_at, finished_at, created_at, updated_at)
SELECT
    id,
    kind,
    CASE status WHEN 'pending' THEN 'queued' WHEN 'done' THEN 'succeeded' ELSE status END,
    payload, result, error, started_at, finished_at, created_at, updated_at
FROM jobs;

DROP TABLE jobs;

ALTER TABLE jobs_new RENAME TO jobs;

-- A claim reads only queued ids, so it costs the same at any depth.
CREATE INDEX jobs_queued ON jobs (id) WHERE status = 'queued';

-- Recovery at start reads only running jobs.
CREATE INDEX jobs_running ON jobs (id) WHERE status = 'running';
