-- locked_on: the server (by its start time) the runner's lock is on now; after a
-- restart or a failover the runner takes its lock again and says where.
UPDATE jobtable_runners
SET beat = beat + 1, busy = %(busy)s, last_seen = %(now)s, locked_on = %(locked_on)s
WHERE id = %(id)s
