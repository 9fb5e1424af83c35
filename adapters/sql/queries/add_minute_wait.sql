-- A runner's count of the jobs of one minute, queue and kind whose wait fell in one bucket.
INSERT INTO jobtable_minute_waits (minute, queue, kind, bucket, jobs)
VALUES (:minute, :queue, :kind, :bucket, :jobs)
ON CONFLICT (minute, queue, kind, bucket) DO UPDATE
SET jobs = jobtable_minute_waits.jobs + excluded.jobs
