INSERT OR REPLACE INTO jobtable_runners
    (id, host, pid, started_at, kinds, queues, workers, busy, last_seen, beat, locked_on)
VALUES (:id, :host, :pid, :started_at, :kinds, :queues, :workers, 0, :now, 0, NULL)
