-- A request that ended without an answer lets its key go; an answered key is kept.
DELETE FROM jobtable_idempotency WHERE key = :key AND status IS NULL
