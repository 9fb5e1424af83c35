-- 0005_observe: each job's history of changes, lists by status/kind/queue, retention.
--
-- job_events: one row per visible change of a job (its public status, result or
-- error), numbered per job from 1; version 0 is the job as created (queued, no
-- result) and is never stored. A trigger writes it, so every writer (this
-- process, another process, an older release, a hand-written UPDATE) leaves
-- the same history, in the same transaction as the change. Only the last 1,000
-- changes of a job are kept; a job's history goes when the job does.
CREATE TABLE job_events (
    job_id  TEXT NOT NULL,
    version INTEGER NOT NULL,
    status  TEXT NOT NULL,  -- the public status (scheduled shows as queued)
    result  TEXT,
    error   TEXT,
    PRIMARY KEY (job_id, version)
) WITHOUT ROWID;

CREATE TRIGGER jobs_changed AFTER UPDATE OF status, result, error ON jobs
WHEN (CASE OLD.status WHEN 'scheduled' THEN 'queued' ELSE OLD.status END)
         IS NOT (CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END)
     OR OLD.result IS NOT NEW.result
     OR OLD.error IS NOT NEW.error
BEGIN
    INSERT INTO job_events (job_id, version, status, result, error)
    VALUES (
        NEW.id,
        coalesce((SELECT max(version) FROM job_events WHERE job_id = NEW.id), 0) + 1,
        CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END,
        NEW.result,
        NEW.error
    );
    DELETE FROM job_events
    WHERE job_id = NEW.id
      AND version <= (SELECT max(version) FROM job_events WHERE job_id = NEW.id) - 1000;
END;

CREATE TRIGGER jobs_deleted AFTER DELETE ON jobs
BEGIN
    DELETE FROM job_events WHERE job_id = OLD.id;
END;

-- Lists, newest first (ids are UUIDv7: they sort by creation), one index range per
-- stored status, merged: a page costs the same at any depth.
CREATE INDEX jobs_by_status ON jobs (status, id);
CREATE INDEX jobs_by_kind ON jobs (kind, status, id);
CREATE INDEX jobs_by_queue ON jobs (queue, status, id);

-- Retention reads finished jobs by when they finished.
CREATE INDEX jobs_finished ON jobs (status, finished_at) WHERE status IN ('succeeded', 'failed');

-- Until when a unique key kept past its job's end (a cron tick's, a period's) must stay:
-- retention keeps the row that holds it until then. NULL with a kept key: for good.
ALTER TABLE jobs ADD COLUMN key_until TEXT;

-- Chores one runner at a time does (retention): who holds each, until when.
CREATE TABLE jobtable_leases (
    name   TEXT NOT NULL PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TEXT NOT NULL
);
