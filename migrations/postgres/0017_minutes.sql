-- 0017_minutes: the dashboard's charts read a small rollup, not the jobs table. Each runner
-- adds, every few seconds, the jobs it finished per minute, queue and kind, and how long
-- the jobs it started had waited (a histogram: bucket i counts waits up to WAIT_BUCKETS[i]).
-- Rows older than a day are deleted as new ones come.
CREATE TABLE jobtable_minutes (
    minute    timestamptz NOT NULL,
    queue     text NOT NULL,
    kind      text NOT NULL,
    succeeded bigint NOT NULL DEFAULT 0,
    failed    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (minute, queue, kind)
);
CREATE TABLE jobtable_minute_waits (
    minute timestamptz NOT NULL,
    queue  text NOT NULL,
    kind   text NOT NULL,
    bucket integer NOT NULL,
    jobs   bigint NOT NULL,
    PRIMARY KEY (minute, queue, kind, bucket)
);
