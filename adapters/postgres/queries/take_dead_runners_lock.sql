-- A dead runner's advisory lock, held until this transaction commits: an owner that comes
-- back waits, and finds which jobs are still its own only after the settling. (The key is
-- the lock session's: runner_locks.py.) A runner id of NULL (rows that record no owner)
-- takes the empty id's.
SELECT pg_try_advisory_xact_lock(hashtextextended(coalesce(:owner, ''), 0) & 4611686018427387903)
