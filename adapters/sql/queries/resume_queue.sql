-- A resumed queue keeps its limits; without them it keeps no row (forget_plain_queue).
UPDATE jobtable_queues SET paused = FALSE, updated_at = :now WHERE name = :name
