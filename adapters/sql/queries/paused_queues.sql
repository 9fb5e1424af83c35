SELECT name FROM jobtable_queues WHERE paused
