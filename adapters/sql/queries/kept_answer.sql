SELECT request_hash, status, body, created_at FROM jobtable_idempotency WHERE key = :key
