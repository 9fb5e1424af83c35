-- A full limited queue's due jobs by kind: every one is held back by the queue.
SELECT kind, COUNT(*) FROM jobs WHERE status = 'queued' AND queue = :queue GROUP BY kind
