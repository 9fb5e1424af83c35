-- One queue's limits, if an operator set any.
SELECT name, running_limit, rate_n, rate_per FROM jobtable_queues
WHERE name = :name AND (running_limit IS NOT NULL OR rate_n IS NOT NULL)
