-- The first :limit due jobs in claim order of each of :limit_keys, with their keys, all in
-- claim order; none held ahead, in the runner's queues, none in a paused queue: one seek
-- per key and queue. SQLite keeps one index of a keyed limit's waiting jobs, by key and
-- queue (migrations/sqlite/0021), so this reads each queue on its own, as
-- limit_heads_by_queue does.
{{limit_heads_in_each_queue}}
