-- 0020_keys_by_queue: a limited or fair kind's claim passes over its jobs in a paused or
-- limited queue (or one its runner does not serve) without reading them. While a queue
-- is passed over, its statements read each queue on its own (adapters/sql/queue_reads.py,
-- adapters/*/queries/_kind_queues.sql): these indexes of a key's waiting jobs put the
-- queue after the key, one seek per key and queue. Only jobs with a fair or limit key are
-- in them.
CREATE INDEX jobs_fair_in_queue ON jobs (kind, priority, fair_key, queue, run_at, id)
    WHERE status = 'queued' AND fair_key IS NOT NULL;
CREATE INDEX jobs_limit_keys_in_queue ON jobs (kind, limit_key, queue, priority, run_at, id)
    WHERE status = 'queued' AND limit_key IS NOT NULL;
