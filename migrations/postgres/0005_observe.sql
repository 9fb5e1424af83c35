-- 0005_observe: each job's history of changes, lists by status/kind/queue, retention.
--
-- job_events: one row per visible change of a job (its public status, result or
-- error), numbered per job from 1; version 0 is the job as created (queued, no
-- result) and is never stored. A trigger writes it, so every writer leaves the
-- same history in the same transaction as the change, and tells listeners on
-- the schema's events channel which job changed. Only the last 1,000 changes
-- of a job are kept; a job's history goes when the job does. Two writers of
-- one job queue on its row lock, and each statement of the trigger reads with
-- a fresh snapshot, so versions follow commit order.
CREATE TABLE job_events (
    job_id  text NOT NULL,
    version integer NOT NULL,
    status  text NOT NULL,  -- the public status (scheduled shows as queued)
    result  text,
    error   text,
    PRIMARY KEY (job_id, version)
);

-- Both functions keep the search_path of the migration (the schema the tables are in),
-- so a change made from a session with another search_path (an operator's psql, an
-- application's connection) writes this schema's history, not another's.
CREATE FUNCTION jobtable_job_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    next_version integer;
BEGIN
    SELECT coalesce(max(version), 0) + 1 INTO next_version
    FROM job_events WHERE job_id = NEW.id;
    INSERT INTO job_events (job_id, version, status, result, error)
    VALUES (NEW.id, next_version,
            CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END,
            NEW.result, NEW.error);
    IF next_version > 1000 THEN
        DELETE FROM job_events WHERE job_id = NEW.id AND version <= next_version - 1000;
    END IF;
    PERFORM pg_notify(left('jobtable_events_' || TG_TABLE_SCHEMA, 63), NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_changed AFTER UPDATE OF status, result, error ON jobs
FOR EACH ROW
WHEN ((CASE OLD.status WHEN 'scheduled' THEN 'queued' ELSE OLD.status END)
          IS DISTINCT FROM (CASE NEW.status WHEN 'scheduled' THEN 'queued' ELSE NEW.status END)
      OR OLD.result IS DISTINCT FROM NEW.result
      OR OLD.error IS DISTINCT FROM NEW.error)
EXECUTE FUNCTION jobtable_job_changed();

CREATE FUNCTION jobtable_job_deleted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM job_events WHERE job_id = OLD.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_deleted AFTER DELETE ON jobs
FOR EACH ROW EXECUTE FUNCTION jobtable_job_deleted();

-- Lists, newest first (ids are UUIDv7: they sort by creation), one index range per
-- stored status, merged: a page costs the same at any depth.
CREATE INDEX jobs_by_status ON jobs (status, id);
CREATE INDEX jobs_by_kind ON jobs (kind, status, id);
CREATE INDEX jobs_by_queue ON jobs (queue, status, id);

-- Which kinds run in which queues, and in which states, go together: without joint
-- statistics the planner takes a kind that never had a status for a common one and
-- reads a whole index range (66 ms for a page at 1,000,000 jobs, 1 ms with them).
CREATE STATISTICS jobs_kind_status_queue (mcv) ON kind, status, queue FROM jobs;

-- Retention reads finished jobs by when they finished.
CREATE INDEX jobs_finished ON jobs (status, finished_at) WHERE status IN ('succeeded', 'failed');

-- Until when a unique key kept past its job's end (a cron tick's, a period's) must stay:
-- retention keeps the row that holds it until then. NULL with a kept key: for good.
ALTER TABLE jobs ADD COLUMN key_until timestamptz;

-- Chores one runner at a time does (retention): who holds each, until when.
CREATE TABLE jobtable_leases (
    name   text NOT NULL PRIMARY KEY,
    holder text NOT NULL,
    until  timestamptz NOT NULL
);
