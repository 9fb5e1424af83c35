-- 0002_jobs_status: every claim records its runner and attempt; claims read a
-- partial index of queued jobs. (SQLite's 0002 also maps the reference's old
-- statuses; no PostgreSQL database ever held them.)
ALTER TABLE jobs ADD COLUMN claimed_by text;
ALTER TABLE jobs ADD COLUMN attempt integer NOT NULL DEFAULT 0;
CREATE INDEX jobs_queued ON jobs (id) WHERE status = 'queued';
CREATE INDEX jobs_running ON jobs (id) WHERE status = 'running';
