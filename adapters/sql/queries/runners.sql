SELECT id, host, pid, started_at, kinds, queues, workers, busy, last_seen
FROM jobtable_runners ORDER BY started_at, id
