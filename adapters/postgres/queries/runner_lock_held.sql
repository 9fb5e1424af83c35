-- Whether a runner's advisory lock is held by any session now.
SELECT EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND ((l.classid::bigint << 32) | l.objid::bigint)
          = (hashtextextended(coalesce(%(owner)s, ''), 0) & 4611686018427387903)
)
