-- The first :limit due jobs in claim order of each of :limit_keys in each queue read on
-- its own (passed-over queues left out), one seek per key and queue.
{{limit_heads_in_each_queue}}
