-- A key kept past its time, or one whose request never answered and has been in
-- flight too long (core/idempotency.stale_before), may be taken again.
DELETE FROM jobtable_idempotency
WHERE key = :key
  AND (created_at < :answered_before OR (status IS NULL AND created_at < :unanswered_before))
