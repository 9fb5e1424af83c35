-- One start of a job in a rate-limited queue, counted by later claims while in the window.
INSERT INTO jobtable_queue_starts (queue, started_at) VALUES (:queue, :now)
