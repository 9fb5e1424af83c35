-- The room a limited kind's claim has (claim_within_limit): :limit at most, and no more
-- than its limit leaves (:room_of) nor than its rate does (:rate_n):
-- - 'limit' (a limit :n without a key): :n less the kind's running jobs;
-- - 'keyed' (a limit :n with a key): all :limit if the busiest key (jobs with no key
--   share one) has room for them all, else none;
-- - NULL: no limit;
-- - :rate_n (a rate without a key; NULL: none): :rate_n less its starts in the window,
--   after :since: :kept that the claiming store kept from before :latest
--   (rate_windows.py), and those stamped at or after :latest, counted here.
min(
    CASE :room_of
        WHEN 'keyed' THEN (
            CASE WHEN :n - (
                SELECT COALESCE(MAX(running), 0) FROM (
                    SELECT COUNT(*) AS running FROM jobs
                    WHERE status = 'running' AND kind = :kind GROUP BY limit_key
                )
            ) >= :limit THEN :limit ELSE 0 END
        )
        WHEN 'limit' THEN max(0, min(:limit, :n - (
            SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
        )))
        ELSE :limit
    END,
    CASE WHEN :rate_n IS NULL THEN :limit ELSE max(0, min(:limit, :rate_n - :kept - (
        SELECT COUNT(*) FROM jobtable_starts
        WHERE kind = :kind AND started_at >= :latest AND started_at > :since
    ))) END
)
