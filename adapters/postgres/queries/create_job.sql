INSERT INTO jobs (id, kind, status, payload, created_at, updated_at)
VALUES (%(id)s, %(kind)s, 'queued', %(payload)s, %(now)s, %(now)s)
