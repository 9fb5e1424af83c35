-- 0001_jobs: the jobs table as the reference first made it.
--
-- IF NOT EXISTS keeps a jobs table the reference already made (statuses
-- pending, running, done, failed): 0002 then carries its rows over.
CREATE TABLE IF NOT EXISTS jobs (
    id          TEXT NOT NULL PRIMARY KEY,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    payload     TEXT NOT NULL, -- JSON
    result      TEXT,          -- JSON, written progressively
    error       TEXT,
    started_at  TEXT,
    finished_at TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
