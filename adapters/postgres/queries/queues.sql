-- Every queue that holds jobs or a pause, with its jobs counted by public status.
WITH counted AS (
    SELECT queue, CASE status WHEN 'scheduled' THEN 'queued' ELSE status END AS shown,
           count(*) AS n
    FROM jobs GROUP BY 1, 2
), names AS (
    SELECT queue AS name FROM counted UNION SELECT name FROM jobtable_queues
)
SELECT names.name, coalesce(q.paused, false), counted.shown, counted.n
FROM names
LEFT JOIN jobtable_queues q ON q.name = names.name
LEFT JOIN counted ON counted.queue = names.name
ORDER BY names.name
