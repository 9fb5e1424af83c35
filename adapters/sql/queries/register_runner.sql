-- A runner's row, written when it starts (and again after others judged it dead and
-- removed it); one already there is brought up to date, its beat kept.
INSERT INTO jobtable_runners
    (id, host, pid, started_at, kinds, queues, workers, busy, last_seen, beat, locked_on, limits)
VALUES (
    :id, :host, :pid, :started_at, :kinds, :queues, :workers, 0, :now, 0, :locked_on, :limits
)
ON CONFLICT (id) DO UPDATE SET
    host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
    kinds = excluded.kinds, queues = excluded.queues, workers = excluded.workers,
    last_seen = excluded.last_seen, locked_on = excluded.locked_on, limits = excluded.limits
