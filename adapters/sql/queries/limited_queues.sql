-- Queues an operator limits (a running limit, a rate or both): claimed apart, under their
-- locks, by the runners that read them here.
SELECT name, running_limit, rate_n, rate_per FROM jobtable_queues
WHERE running_limit IS NOT NULL OR rate_n IS NOT NULL
