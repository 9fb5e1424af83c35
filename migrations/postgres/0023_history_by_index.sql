-- 0023_history_by_index: a job's history is numbered by an index seek, whatever the
-- statistics say. The history trigger (0006) numbers each change on from the job's last
-- version, max(version) of its rows in job_events. A plan made while job_events was
-- small (ANALYZE, as autovacuum runs it, on a young database) read that max by scanning
-- the whole table, and a session kept that plan as the table grew: every status change
-- then read every job's history (a drain of 2,000 jobs: each start and outcome 0.1 ms
-- slower, and growing). job_events' primary key (job_id, version) answers it in a seek.
ALTER FUNCTION jobtable_jobs_changed() SET enable_seqscan = off;
