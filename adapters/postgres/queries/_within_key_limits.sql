-- Of ``due`` (a limited kind's first :page due jobs, in claim order), those a claim takes
-- (claim_within_limit), in claim order: under a keyed limit (:room_of 'keyed', :n a key)
-- each whose key has room, counting the key's running jobs (a seek in
-- jobs_running_limits: an equality, or IS NULL for jobs with no key, which share one)
-- and its jobs before it here; as many as the room (_limit_room) at most.
SELECT id FROM (
    SELECT id, priority, run_at, limit_key,
        row_number() OVER (PARTITION BY limit_key ORDER BY priority, run_at, id) AS nth
    FROM due
) AS counted
WHERE :room_of::text IS DISTINCT FROM 'keyed' OR nth + (
    CASE WHEN counted.limit_key IS NULL THEN (
        SELECT COUNT(*) FROM jobs AS r
        WHERE r.status = 'running' AND r.kind = :kind AND r.limit_key IS NULL
    ) ELSE (
        SELECT COUNT(*) FROM jobs AS r
        WHERE r.status = 'running' AND r.kind = :kind AND r.limit_key = counted.limit_key
    ) END
) <= :n::bigint
ORDER BY priority, run_at, id
LIMIT ({{limit_room}})
