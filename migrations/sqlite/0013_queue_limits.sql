-- 0013_queue_limits: limits an operator sets on a queue at run time (PATCH
-- /api/v1/queues/{name}, `jobtable queue-limit`): at most running_limit of its jobs
-- running at once, at most rate_n started in any rate_per seconds, across every runner.
-- A queue with either is claimed apart, under its lock; its starts are kept in
-- jobtable_queue_starts as a rate-limited kind's are in jobtable_starts.
ALTER TABLE jobtable_queues ADD COLUMN running_limit INTEGER;
ALTER TABLE jobtable_queues ADD COLUMN rate_n INTEGER;
ALTER TABLE jobtable_queues ADD COLUMN rate_per REAL;
-- What every plain claim (and hold) checks of a queue: paused, or limited (its jobs are
-- claimed apart, under its limits, by the runners that know it is).
ALTER TABLE jobtable_queues ADD COLUMN passed_over BOOLEAN
    GENERATED ALWAYS AS (paused OR running_limit IS NOT NULL OR rate_n IS NOT NULL) VIRTUAL;
CREATE TABLE jobtable_queue_starts (
    queue      TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE INDEX jobtable_queue_starts_by_queue ON jobtable_queue_starts (queue, started_at);
