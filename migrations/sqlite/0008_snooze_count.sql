-- 0008_snooze_count: a job counts its snoozes, and its attempts log keeps its last 20.
--
-- Every snooze appended to the log, rewritten whole each time: a job that snoozed for
-- ever grew without bound (half a megabyte after 3,000). Now the count is a column and
-- the log keeps the last 20 entries of any kind (ATTEMPTS_KEPT); rows logged before are
-- counted from their log and trimmed to the same 20.
ALTER TABLE jobs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;

UPDATE jobs
SET snoozes = (SELECT count(*) FROM json_each(jobs.attempts_log) AS entry
               WHERE json_extract(entry.value, '$.outcome') = 'snoozed'),
    attempts_log = (SELECT json_group_array(json(entry.value))
                    FROM json_each(jobs.attempts_log) AS entry
                    WHERE entry.key >= json_array_length(jobs.attempts_log) - 20)
WHERE CASE WHEN json_valid(attempts_log) THEN json_type(attempts_log) = 'array' ELSE 0 END;
