SELECT id, kind, CASE status WHEN 'scheduled' THEN 'queued' ELSE status END, result, error
FROM jobs WHERE id = :id
