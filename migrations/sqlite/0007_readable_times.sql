-- 0007_readable_times: every time a job's row holds is one jobtable can read.
--
-- A row from the reference or a tool may hold a time that is not a timestamp (0004 copied
-- such a created_at into run_at), or one without an offset, or in another zone. A claim
-- that meets an unreadable run_at sets its row aside; this gives every such time a
-- readable value instead, in the form jobtable writes (UTC, microseconds, +00:00), so
-- text order stays time order:
--   * a time SQLite can read is rewritten in that form (one with no offset is UTC);
--   * an unreadable created_at becomes this migration's time; an unreadable run_at the
--     job's (readable) creation time, so the job keeps its place among the old ones;
--   * an unreadable started_at is forgotten (NULL); an unreadable finished_at becomes
--     this migration's time, so retention still counts from a time it can compare;
--   * updated_at, which nothing reads, is left as it is.
-- The statement returns each row it repaired; the migrator logs how many.
UPDATE jobs
SET created_at = coalesce(t.created_at, t.now),
    run_at = coalesce(t.run_at, t.created_at, t.now),
    started_at = t.started_at,
    finished_at = CASE WHEN jobs.finished_at IS NOT NULL THEN coalesce(t.finished_at, t.now) END
FROM (
    SELECT id,
           strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now') AS now,
           -- Each time as it should be stored: itself when it is in jobtable's form and a
           -- real date and time; else SQLite's reading of it in that form; else NULL.
           CASE WHEN created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00'
                     AND created_at >= '0001'
                     AND date(substr(created_at, 1, 10), '+0 days') IS substr(created_at, 1, 10)
                     AND time(substr(created_at, 12, 8), '+0 seconds') IS substr(created_at, 12, 8)
                THEN created_at
                WHEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', created_at, '+0 days') >= '0001'
                THEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', created_at, '+0 days')
           END AS created_at,
           CASE WHEN run_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00'
                     AND run_at >= '0001'
                     AND date(substr(run_at, 1, 10), '+0 days') IS substr(run_at, 1, 10)
                     AND time(substr(run_at, 12, 8), '+0 seconds') IS substr(run_at, 12, 8)
                THEN run_at
                WHEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', run_at, '+0 days') >= '0001'
                THEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', run_at, '+0 days')
           END AS run_at,
           CASE WHEN started_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00'
                     AND started_at >= '0001'
                     AND date(substr(started_at, 1, 10), '+0 days') IS substr(started_at, 1, 10)
                     AND time(substr(started_at, 12, 8), '+0 seconds') IS substr(started_at, 12, 8)
                THEN started_at
                WHEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', started_at, '+0 days') >= '0001'
                THEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', started_at, '+0 days')
           END AS started_at,
           CASE WHEN finished_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00'
                     AND finished_at >= '0001'
                     AND date(substr(finished_at, 1, 10), '+0 days') IS substr(finished_at, 1, 10)
                     AND time(substr(finished_at, 12, 8), '+0 seconds') IS substr(finished_at, 12, 8)
                THEN finished_at
                WHEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', finished_at, '+0 days') >= '0001'
                THEN strftime('%Y-%m-%dT%H:%M:%f000+00:00', finished_at, '+0 days')
           END AS finished_at
    FROM jobs
) AS t
WHERE t.id = jobs.id
  AND (t.created_at IS NOT jobs.created_at OR t.run_at IS NOT jobs.run_at
       OR t.started_at IS NOT jobs.started_at OR t.finished_at IS NOT jobs.finished_at)
RETURNING id AS repaired;
