-- Running jobs whose owner holds no liveness lock: no session has the advisory
-- lock keyed by the owner's id (pg_advisory_lock(bigint) shows the key's high
-- half as classid and its low half as objid). Locked, skipping rows another
-- sweeper is settling. Nothing is an orphan in the first seconds after the
-- server started: a restart ended every session, and live runners need a
-- moment (their next sweep, each second) to take their locks again.
SELECT j.id, j.kind, j.attempt, j.claimed_by
FROM jobs j
WHERE j.status = 'running'
  AND pg_postmaster_start_time() < now() - interval '5 seconds'
  AND NOT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::bigint = (hashtextextended(coalesce(j.claimed_by, ''), 0) & 4611686018427387903) >> 32
      AND l.objid::bigint = (hashtextextended(coalesce(j.claimed_by, ''), 0) & 4611686018427387903) & 4294967295
  )
FOR UPDATE OF j SKIP LOCKED
