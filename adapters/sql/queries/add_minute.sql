-- A runner's counts of one minute, queue and kind, added to what other runners wrote.
INSERT INTO jobtable_minutes (minute, queue, kind, succeeded, failed)
VALUES (:minute, :queue, :kind, :succeeded, :failed)
ON CONFLICT (minute, queue, kind) DO UPDATE
SET succeeded = jobtable_minutes.succeeded + excluded.succeeded,
    failed = jobtable_minutes.failed + excluded.failed
