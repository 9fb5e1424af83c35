-- Every registered runner and every owner of a running job without a row: its
-- beat, whether its advisory lock is held now (pg_advisory_lock(bigint) shows
-- the key's high half as classid and its low half as objid), and whether its
-- row says the lock was taken on this very server (a restart or a failover
-- since makes an absent lock mean nothing), and whether any job runs in its
-- name (an idle runner with none skips its look for lost claims: one
-- transaction a sweep, not two).
WITH held AS (
    SELECT (l.classid::bigint << 32) | l.objid::bigint AS key
    FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
), here AS (
    SELECT extract(epoch FROM pg_postmaster_start_time())::text AS incarnation
), seen AS (
    SELECT r.id, true AS registered, r.beat, r.locked_on = (SELECT incarnation FROM here) AS on_this_server
    FROM jobtable_runners r
    UNION ALL
    SELECT DISTINCT j.claimed_by, false, NULL::bigint, false
    FROM jobs j
    WHERE j.status = 'running'
      AND NOT EXISTS (SELECT 1 FROM jobtable_runners r WHERE r.id IS NOT DISTINCT FROM j.claimed_by)
)
SELECT seen.id, seen.registered, seen.beat, seen.on_this_server,
       EXISTS (
           SELECT 1 FROM held
           WHERE held.key = (hashtextextended(coalesce(seen.id, ''), 0) & 4611686018427387903)
       ) AS lock_held,
       seen.registered AND EXISTS (
           SELECT 1 FROM jobs j WHERE j.status = 'running' AND j.claimed_by = seen.id
       ) AS holds_running
FROM seen
