-- Claims of a limited kind take turns across runners: each counts the jobs of the kind
-- running, then claims, under this lock, held until its transaction ends. Its own
-- statement: the count after it reads every claim committed before it was granted.
-- The key names the schema too: another jobtable in another schema takes turns apart.
SELECT pg_advisory_xact_lock(
    hashtextextended('jobtable.limit:' || current_schema() || ':' || :kind, 0)
)
