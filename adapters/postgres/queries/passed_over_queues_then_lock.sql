-- passed_over_queues, and then the lock of a claim's one limited kind (lock_limited_kind),
-- in one statement (a statement costs the client about 40 µs). The look reads the queues
-- as they were when the statement began, as when it went before the lock on its own;
-- the statements after it run once the lock is granted. The lock is the outer side of
-- the join, so it is taken whether or not a queue is passed over; its own row (the
-- queue's columns NULL) comes back when none is.
WITH locked AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(
        hashtextextended('jobtable.limit:' || current_schema() || ':' || :kind, 0)
    )
)
SELECT q.name, q.running_limit, q.rate_n, q.rate_per
FROM locked LEFT JOIN jobtable_queues AS q ON q.passed_over
