-- Whether any queue is paused or limited (passed over by plain claims): while one is, a
-- store's limited and fair claims read each queue on their own
-- (adapters/sql/queue_reads.py).
SELECT EXISTS (SELECT 1 FROM jobtable_queues WHERE passed_over)
