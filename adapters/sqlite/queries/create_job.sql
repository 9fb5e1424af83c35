INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, max_attempts)
VALUES (:id, :kind, 'queued', :payload, :now, :now, :max_attempts)
