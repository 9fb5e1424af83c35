-- 0010_cheap_rows: a job's claim and its end write fewer index entries (bench/row_costs.py
-- measures each index and the trigger). The same number and name as SQLite's 0010.
--
-- The lists' indexes leave running jobs out: a claim (queued -> running), which writes a
-- new version of the row and so an entry in every index whose predicate holds, no longer
-- writes one in each of them. Running jobs are few (one per busy worker) and are listed
-- from jobs_running, now in id order, which the sweep and the cancel poll read whole (a
-- runner's running jobs, as before, at the cost of the running jobs of every runner).
DROP INDEX jobs_by_status;
DROP INDEX jobs_by_kind;
DROP INDEX jobs_by_queue;
DROP INDEX jobs_running;
CREATE INDEX jobs_by_status ON jobs (status, id) WHERE status <> 'running';
CREATE INDEX jobs_by_kind ON jobs (kind, status, id) WHERE status <> 'running';
CREATE INDEX jobs_by_queue ON jobs (queue, status, id) WHERE status <> 'running';
CREATE INDEX jobs_running ON jobs (id, claimed_by) WHERE status = 'running';
