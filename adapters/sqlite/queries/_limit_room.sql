-- The room a limited kind's claim has (claim_within_limit, :room_of): :limit at most.
CASE :room_of
    WHEN 'keyed' THEN (
        CASE WHEN :n - (
            SELECT COALESCE(MAX(running), 0) FROM (
                SELECT COUNT(*) AS running FROM jobs
                WHERE status = 'running' AND kind = :kind GROUP BY limit_key
            )
        ) >= :limit THEN :limit ELSE 0 END
    )
    WHEN 'rate' THEN max(0, min(:limit, :n - :kept - (
        SELECT COUNT(*) FROM jobtable_starts
        WHERE kind = :kind AND started_at >= :latest AND started_at > :since
    )))
    ELSE max(0, min(:limit, :n - (
        SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
    )))
END
