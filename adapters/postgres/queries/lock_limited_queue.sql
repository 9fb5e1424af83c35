-- Claims from a limited queue take turns across runners, as lock_limited_kind for a kind
-- (its own key space: a queue may share a kind's name). Taken after every kind's lock.
SELECT pg_advisory_xact_lock(
    hashtextextended('jobtable.queue-limit:' || current_schema() || ':' || :queue, 0)
)
