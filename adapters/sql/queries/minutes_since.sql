-- Each kept minute from :since on, with its wait buckets (one row per bucket, or one with
-- none); the rows of a minute, queue and kind come together.
SELECT m.minute, m.queue, m.kind, m.succeeded, m.failed, NULL AS bucket, NULL AS jobs
FROM jobtable_minutes AS m WHERE m.minute >= :since
UNION ALL
SELECT w.minute, w.queue, w.kind, 0, 0, w.bucket, w.jobs
FROM jobtable_minute_waits AS w WHERE w.minute >= :since
