-- 0003_runners: the registry of live runners, the attempt budget on each job, and
-- legacy rows counted as the attempts they were.
--
-- jobtable_runners is liveness and the registry in one: a runner writes its row
-- when it starts, raises `beat` every sweep, and deletes the row when it stops;
-- others settle its jobs only when its death is certain (core/liveness.py).
-- `last_seen` is the owner's own clock, for people to read: never compared.
CREATE TABLE jobtable_runners (
    id         text NOT NULL PRIMARY KEY,
    host       text NOT NULL,
    pid        integer NOT NULL,
    started_at timestamptz NOT NULL,
    kinds      text NOT NULL,            -- JSON array of the kinds it runs
    queues     text,                     -- JSON array of the queues it serves; NULL: all
    workers    integer NOT NULL,
    busy       integer NOT NULL DEFAULT 0,
    last_seen  timestamptz NOT NULL,
    beat       bigint NOT NULL DEFAULT 0,
    locked_on  text                      -- PostgreSQL only: the server its lock is on
);

-- The attempt budget is stored with the job, so a runner that did not register
-- its kind settles it by the budget it was enqueued with.
ALTER TABLE jobs ADD COLUMN max_attempts integer NOT NULL DEFAULT 1;

-- The reference had no attempt column: a row it started (running, or finished)
-- was one attempt, so a job it left running is settled, never run again past
-- its budget.
UPDATE jobs SET attempt = 1 WHERE attempt = 0 AND status <> 'queued';

-- A sweep reads the owners of running jobs.
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (claimed_by) WHERE status = 'running';
