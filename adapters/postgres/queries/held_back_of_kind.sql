-- A kind's due jobs held back, per queue: by its limit (every one: :limit_all, else those
-- of the full :limit_keys), and by its rate alone (likewise); the :passed_queues (paused,
-- or held back by their own limits already) are passed over. Reads the kind's due rows (jobs_ready).
SELECT queue,
    COUNT(*) FILTER (WHERE by_limit),
    COUNT(*) FILTER (WHERE NOT by_limit AND by_rate)
FROM (
    SELECT queue,
        (:limit_all OR COALESCE(limit_key = ANY(:limit_keys::text[]), FALSE)) AS by_limit,
        (:rate_all OR COALESCE(rate_key = ANY(:rate_keys::text[]), FALSE)) AS by_rate
    FROM jobs
    WHERE status = 'queued' AND kind = :kind AND NOT (queue = ANY(:passed_queues::text[]))
) AS due
WHERE by_limit OR by_rate
GROUP BY queue
