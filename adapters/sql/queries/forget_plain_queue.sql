-- A queue neither paused nor limited keeps no row: a queue without jobs or a row is not
-- listed, so names clients chose once do not pile up (a queue without a row runs).
DELETE FROM jobtable_queues
WHERE name = :name AND NOT paused AND running_limit IS NULL AND rate_n IS NULL
