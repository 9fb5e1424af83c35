-- Starts of a rate-limited kind that have left its window: no count needs them again.
DELETE FROM jobtable_starts WHERE kind = :kind AND started_at <= :since
