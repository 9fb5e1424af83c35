-- 0017_minutes: the dashboard's charts read a small rollup, not the jobs table. Each runner
-- adds, every few seconds, the jobs it finished per minute, queue and kind, and how long
-- the jobs it started had waited (a histogram: bucket i counts waits up to WAIT_BUCKETS[i]).
-- Rows older than a day are deleted as new ones come.
CREATE TABLE jobtable_minutes (
    minute    TEXT NOT NULL,
    queue     TEXT NOT NULL,
    kind      TEXT NOT NULL,
    succeeded INTEGER NOT NULL DEFAULT 0,
    failed    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (minute, queue, kind)
);
CREATE TABLE jobtable_minute_waits (
    minute TEXT NOT NULL,
    queue  TEXT NOT NULL,
    kind   TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    jobs   INTEGER NOT NULL,
    PRIMARY KEY (minute, queue, kind, bucket)
);
