-- Every schedule a runner recorded, by name, with its queue's pause and its last tick:
-- the due time of the newest job a tick of it made that is still kept (a tick's unique
-- key is 'schedule:NAME@TIME'; read through the kind's jobs).
SELECT s.name, s.kind, s.expression, s.timezone, s.queue, coalesce(q.paused, FALSE),
       (SELECT max(jobs.run_at) FROM jobs
        WHERE jobs.kind = s.kind AND jobs.unique_key IS NOT NULL
          AND substr(jobs.unique_key, 1, length(s.name) + 10) = 'schedule:' || s.name || '@')
FROM jobtable_schedules AS s
LEFT JOIN jobtable_queues AS q ON q.name = s.queue
WHERE s.kind IS NOT NULL
ORDER BY s.name
