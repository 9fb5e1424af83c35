-- 0010_cheap_rows: a job's claim and its end write fewer index entries and a shorter
-- history trigger (bench/row_costs.py measures each index and the trigger).
--
-- The lists' indexes leave running jobs out: a claim (queued -> running) only takes its
-- entries out, an end (running -> succeeded) only puts them in, where each change used to
-- move an entry in all three. Running jobs are few (one per busy worker) and are listed
-- from jobs_running, now in id order, which the sweep and the cancel poll read whole (a
-- runner's running jobs, as before, at the cost of the running jobs of every runner).
-- A query meant to use a list index repeats its predicate (status <> 'running'): SQLite
-- uses a partial index only for a query that says so in the same words.
DROP INDEX jobs_by_status;
DROP INDEX jobs_by_kind;
DROP INDEX jobs_by_queue;
DROP INDEX jobs_running;
CREATE INDEX jobs_by_status ON jobs (status, id) WHERE status <> 'running';
CREATE INDEX jobs_by_kind ON jobs (kind, status, id) WHERE status <> 'running';
CREATE INDEX jobs_by_queue ON jobs (queue, status, id) WHERE status <> 'running';
CREATE INDEX jobs_running ON jobs (id, claimed_by) WHERE status = 'running';

-- The history trigger records the same changes, numbered the same way, in one statement:
-- the trim of a job's history past its last 1,000 changes is a trigger of job_events
-- that runs only when a change numbered past 1,000 is added, so a change to a job with
-- a short history (every job on the hot path) no longer looks for its newest number twice
-- nor runs a DELETE. (INSERT ... SELECT max(version) FROM job_events, one statement
-- too, costs more: SQLite copies a SELECT from the table it inserts into to a temporary
-- one first.)
DROP TRIGGER jobs_changed;
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
END;

CREATE TRIGGER job_events_trimmed AFTER INSERT ON job_events
WHEN NEW.version > 1000
BEGIN
    DELETE FROM job_events WHERE job_id = NEW.job_id AND version <= NEW.version - 1000;
END;
