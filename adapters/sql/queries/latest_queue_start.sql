-- The latest start recorded for a rate-limited queue (as latest_start, for a kind).
SELECT MAX(started_at) FROM jobtable_queue_starts WHERE queue = :queue
