-- 0001_jobs: the jobs table. The same number and name as SQLite's 0001.
CREATE TABLE IF NOT EXISTS jobs (
    id          text NOT NULL PRIMARY KEY,
    kind        text NOT NULL,
    status      text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    payload     text NOT NULL,       -- JSON text, exactly as encoded
    result      text,                -- JSON text: the latest partial or the final result
    error       text,                -- a failure code, only on a failed job
    started_at  timestamptz,
    finished_at timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
