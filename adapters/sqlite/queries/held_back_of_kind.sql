-- A kind's due jobs held back, per queue: by its limit (every one: :limit_all, else those
-- of the full :limit_keys), and by its rate alone (likewise); the :passed_queues (paused,
-- or held back by their own limits already) are passed over. Reads the kind's due rows (jobs_ready).
SELECT queue, SUM(by_limit), SUM(NOT by_limit AND by_rate)
FROM (
    SELECT queue,
        (:limit_all OR COALESCE(limit_key IN (SELECT value FROM json_each(:limit_keys)), 0))
            AS by_limit,
        (:rate_all OR COALESCE(rate_key IN (SELECT value FROM json_each(:rate_keys)), 0))
            AS by_rate
    FROM jobs
    WHERE status = 'queued' AND kind = :kind
      AND queue NOT IN (SELECT value FROM json_each(:passed_queues))
)
WHERE by_limit OR by_rate
GROUP BY queue
