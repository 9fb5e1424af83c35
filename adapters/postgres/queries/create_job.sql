INSERT INTO jobs (id, kind, status, payload, created_at, updated_at, max_attempts)
VALUES (%(id)s, %(kind)s, 'queued', %(payload)s, %(now)s, %(now)s, %(max_attempts)s)
