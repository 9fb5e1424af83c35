-- The room a limited kind's claim has (claim_within_limit, :room_of): :limit at most.
CASE :room_of::text
    WHEN 'keyed' THEN (
        CASE WHEN :n - (
            SELECT COALESCE(MAX(running), 0) FROM (
                SELECT COUNT(*) AS running FROM jobs
                WHERE status = 'running' AND kind = :kind GROUP BY limit_key
            ) AS per_key
        ) >= :limit THEN :limit ELSE 0 END
    )
    WHEN 'rate' THEN GREATEST(0, LEAST(:limit, :n - :kept::bigint - (
        SELECT COUNT(*) FROM jobtable_starts
        WHERE kind = :kind AND started_at >= :latest::timestamptz
          AND started_at > :since::timestamptz
    )))
    ELSE GREATEST(0, LEAST(:limit, :n - (
        SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
    )))
END
