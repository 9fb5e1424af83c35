-- Every schedule a runner recorded, by name, with its queue's pause and the unique key of
-- the newest job a tick of it made that is still kept ('schedule:NAME@TIME': the caller
-- reads the tick from it; a retry moves a job's run_at, never its key). A key whose rest
-- holds another '@' is another schedule's, whose name starts with this one's and an '@'.
SELECT s.name, s.kind, s.expression, s.timezone, s.queue, coalesce(q.paused, FALSE),
       (SELECT jobs.unique_key FROM jobs
        WHERE jobs.kind = s.kind AND jobs.unique_key IS NOT NULL
          AND substr(jobs.unique_key, 1, length(s.name) + 10) = 'schedule:' || s.name || '@'
          AND substr(jobs.unique_key, length(s.name) + 11) NOT LIKE '%@%'
        ORDER BY jobs.id DESC LIMIT 1)
FROM jobtable_schedules AS s
LEFT JOIN jobtable_queues AS q ON q.name = s.queue
WHERE s.kind IS NOT NULL
ORDER BY s.name
