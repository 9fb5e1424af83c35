-- 0008_snooze_count: a job counts its snoozes, and its attempts log keeps its last 20.
-- The same number and name as SQLite's 0008.
--
-- Every snooze appended to the log, rewritten whole each time: a job that snoozed for
-- ever grew without bound (half a megabyte after 3,000). Now the count is a column and
-- the log keeps the last 20 entries of any kind (ATTEMPTS_KEPT); rows logged before are
-- counted from their log and trimmed to the same 20.
ALTER TABLE jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0;

UPDATE jobs
SET snoozes = (SELECT count(*) FROM jsonb_array_elements(attempts_log) AS entry
               WHERE entry ->> 'outcome' = 'snoozed'),
    attempts_log = jsonb_path_query_array(attempts_log, '$[last - 19 to last]')
WHERE jsonb_typeof(attempts_log) = 'array';
