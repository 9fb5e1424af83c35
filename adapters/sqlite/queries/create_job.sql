INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)
VALUES (:id, :kind, 'queued', :payload, :now, :now)
