-- One request takes a key; no row counted when another holds it already.
INSERT INTO jobtable_idempotency (key, request_hash, created_at) VALUES (:key, :hash, :now)
ON CONFLICT (key) DO NOTHING
