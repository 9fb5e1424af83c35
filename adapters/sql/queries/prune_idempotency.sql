-- Idempotency keys kept past their time (core/idempotency.KEEP_FOR), a batch at a time.
DELETE FROM jobtable_idempotency WHERE key IN (
    SELECT key FROM jobtable_idempotency WHERE created_at < :answered_before
    LIMIT :limit
)
