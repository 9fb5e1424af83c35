-- locked_on: where the runner's lock is now (PostgreSQL: the server, by its start time;
-- after a restart or a failover the runner takes its lock again and says where). SQLite
-- locks are files on this host: NULL.
UPDATE jobtable_runners
SET beat = beat + 1, busy = :busy, last_seen = :now, locked_on = :locked_on
WHERE id = :id
