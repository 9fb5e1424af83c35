-- 0019_ready_in_queue: a claim passes over a paused or limited queue's backlog without
-- reading it. While any queue is passed over, a claim probes each kind's other queues on
-- their own (adapters/*/queries/_pick_next.sql), by kind and queue in claim order; a
-- limited queue's own claim reads its jobs of a kind the same way (pick_in_queue).
CREATE INDEX jobs_ready_in_queue ON jobs (kind, queue, priority, run_at, id)
    WHERE status = 'queued';
