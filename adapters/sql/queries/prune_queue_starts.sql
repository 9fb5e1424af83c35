-- Starts of a rate-limited queue that have left its window: no count needs them again.
DELETE FROM jobtable_queue_starts WHERE queue = :queue AND started_at <= :since
