-- The room a limited kind's claim has (claim_within_limit): :limit at most, and no more
-- than its limit leaves (:room_of) nor than its rate does (:rate_n):
-- - 'limit' (a limit :n without a key): :n less the kind's running jobs;
-- - 'keyed' (a limit :n with a key): all :limit if the busiest key (jobs with no key
--   share one) has room for them all, else none;
-- - NULL: no limit;
-- - :rate_n (a rate without a key; NULL: none): :rate_n less its starts in the window,
--   after :since: :kept that the claiming store kept from before :latest
--   (rate_windows.py), and those stamped at or after :latest, counted here.
LEAST(
    CASE :room_of::text
        WHEN 'keyed' THEN (
            CASE WHEN :n::bigint - (
                SELECT COALESCE(MAX(running), 0) FROM (
                    SELECT COUNT(*) AS running FROM jobs
                    WHERE status = 'running' AND kind = :kind GROUP BY limit_key
                ) AS per_key
            ) >= :limit THEN :limit ELSE 0 END
        )
        WHEN 'limit' THEN GREATEST(0, LEAST(:limit, :n::bigint - (
            SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
        )))
        ELSE :limit
    END,
    CASE WHEN :rate_n::bigint IS NULL THEN :limit
    ELSE GREATEST(0, LEAST(:limit, :rate_n::bigint - :kept::bigint - (
        SELECT COUNT(*) FROM jobtable_starts
        WHERE kind = :kind AND started_at >= :latest::timestamptz
          AND started_at > :since::timestamptz
    ))) END
)
