-- 0021_one_limit_key_index: a keyed limit's waiting jobs are listed once, by kind, key
-- and queue (jobs_limit_keys_in_queue), not also by kind and key (jobs_limit_keys). SQLite
-- takes a claimed job's entry out of every partial index it leaves, and a keyed kind's
-- jobs are spread over as many index pages as it has keys: each index cost a claim of
-- such jobs a page per job written at every commit (a tenth of a keyed drain's batch,
-- bench/README.md). A key's first jobs are read one seek per key and queue instead
-- (limit_heads.sql, as limit_heads_by_queue.sql always did).
DROP INDEX IF EXISTS jobs_limit_keys;
