-- A resumed queue keeps no row: a queue without jobs or a pause is not listed, so names
-- clients chose once do not pile up (a queue without a row runs).
DELETE FROM jobtable_queues WHERE name = :name
