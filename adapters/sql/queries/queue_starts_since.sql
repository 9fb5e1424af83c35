-- A rate-limited queue's starts in its window, oldest first: their number, and when the
-- oldest leaves the window (one more may start then).
SELECT started_at FROM jobtable_queue_starts WHERE queue = :queue AND started_at > :since
ORDER BY started_at
