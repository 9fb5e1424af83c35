INSERT INTO jobtable_runners
    (id, host, pid, started_at, kinds, queues, workers, busy, last_seen, beat, locked_on)
VALUES (%(id)s, %(host)s, %(pid)s, %(started_at)s, %(kinds)s, %(queues)s, %(workers)s, 0,
        %(now)s, 0, %(locked_on)s)
ON CONFLICT (id) DO UPDATE SET
    host = excluded.host, pid = excluded.pid, started_at = excluded.started_at,
    kinds = excluded.kinds, queues = excluded.queues, workers = excluded.workers,
    last_seen = excluded.last_seen, locked_on = excluded.locked_on
