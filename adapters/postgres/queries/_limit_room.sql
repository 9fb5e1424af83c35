-- The room a limited kind's claim has (claim_within_limit): :limit at most, and no more
-- than its limit leaves (:room_of) nor than its rate does (:rate_n):
-- - 'limit' (a limit :n without a key): :n less the kind's running jobs;
-- - 'keyed' (a limit :n with a key) or NULL (no limit): :limit (_within_key_limits
--   takes only the jobs whose key has room);
-- - :rate_n (a rate without a key; NULL: none): :rate_n less its starts in the window,
--   after :since: :kept that the claiming store kept from before :latest
--   (rate_windows.py), and those stamped at or after :latest, counted here.
LEAST(
    CASE WHEN :room_of::text = 'limit' THEN GREATEST(0, LEAST(:limit, :n::bigint - (
        SELECT COUNT(*) FROM jobs WHERE status = 'running' AND kind = :kind
    ))) ELSE :limit END,
    CASE WHEN :rate_n::bigint IS NULL THEN :limit
    ELSE GREATEST(0, LEAST(:limit, :rate_n::bigint - :kept::bigint - (
        SELECT COUNT(*) FROM jobtable_starts
        WHERE kind = :kind AND started_at >= :latest::timestamptz
          AND started_at > :since::timestamptz
    ))) END
)
