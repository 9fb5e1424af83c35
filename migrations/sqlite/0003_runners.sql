-- 0003_runners: the registry of live runners, the attempt budget on each job, and
-- legacy rows counted as the attempts they were.
--
-- jobtable_runners is liveness and the registry in one: a runner writes its row
-- when it starts, raises `beat` every sweep, and deletes the row when it stops;
-- others settle its jobs only when its death is certain (core/liveness.py).
-- `last_seen` is the owner's own clock, for people to read: never compared.
CREATE TABLE jobtable_runners (
    id         TEXT NOT NULL PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    kinds      TEXT NOT NULL,            -- JSON array of the kinds it runs
    queues     TEXT,                     -- JSON array of the queues it serves; NULL: all
    workers    INTEGER NOT NULL,
    busy       INTEGER NOT NULL DEFAULT 0,
    last_seen  TEXT NOT NULL,
    beat       INTEGER NOT NULL DEFAULT 0,
    locked_on  TEXT                      -- PostgreSQL only: the server its lock is on
);

-- The attempt budget is stored with the job, so a runner that did not register
-- its kind settles it by the budget it was enqueued with.
ALTER TABLE jobs ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 1;

-- The reference had no attempt column: a row it started (running, or finished)
-- was one attempt, so a job it left running is settled, never run again past
-- its budget.
UPDATE jobs SET attempt = 1 WHERE attempt = 0 AND status <> 'queued';

-- A sweep reads the owners of running jobs.
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (claimed_by) WHERE status = 'running';
