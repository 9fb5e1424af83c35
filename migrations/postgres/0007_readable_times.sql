-- 0007_readable_times: every time a job's row holds is one jobtable can read. The same
-- number and name as SQLite's 0007.
--
-- A timestamptz column always holds a time, but not always one Python can: 'infinity',
-- '-infinity' and years past 9999 (or before 1) cannot be loaded, and a claim that meets
-- such a run_at sets its row aside. This gives every such time a readable value instead
-- (a day's margin on each side, for the session's time zone):
--   * a created_at becomes this migration's time; a run_at too early the job's creation
--     time (so it keeps its place among the old ones), a run_at too late (a job put off
--     for ever) the last readable month, so it still waits;
--   * a started_at is forgotten (NULL); a finished_at becomes this migration's time, so
--     retention still counts from a time it can compare.
-- The statement returns each row it repaired; the migrator logs how many.
UPDATE jobs
SET created_at = CASE WHEN created_at >= '0001-01-02' AND created_at < '9999-12-30'
                      THEN created_at ELSE now() END,
    run_at = CASE WHEN run_at >= '0001-01-02' AND run_at < '9999-12-30' THEN run_at
                  WHEN run_at >= '9999-12-30' THEN '9999-12-01 00:00:00+00'::timestamptz
                  WHEN created_at >= '0001-01-02' AND created_at < '9999-12-30' THEN created_at
                  ELSE now() END,
    started_at = CASE WHEN started_at >= '0001-01-02' AND started_at < '9999-12-30'
                      THEN started_at END,
    finished_at = CASE WHEN finished_at IS NULL
                            OR (finished_at >= '0001-01-02' AND finished_at < '9999-12-30')
                       THEN finished_at ELSE now() END
WHERE NOT (created_at >= '0001-01-02' AND created_at < '9999-12-30')
   OR NOT (run_at >= '0001-01-02' AND run_at < '9999-12-30')
   OR NOT (started_at >= '0001-01-02' AND started_at < '9999-12-30')
   OR NOT (finished_at >= '0001-01-02' AND finished_at < '9999-12-30')
RETURNING id AS repaired;
