-- The queues plain claims pass over (paused, or limited: a running limit, a rate or
-- both), each with its limits. A limited claim claims the limited ones apart, under
-- their locks; while any is passed over, a store's limited and fair claims read each
-- queue on its own (adapters/sql/queue_reads.py).
SELECT name, running_limit, rate_n, rate_per FROM jobtable_queues WHERE passed_over
