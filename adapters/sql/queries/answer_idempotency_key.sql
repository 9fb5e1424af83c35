UPDATE jobtable_idempotency SET status = :status, body = :body WHERE key = :key
