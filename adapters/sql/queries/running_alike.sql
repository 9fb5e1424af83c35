-- Jobs running now of this job's kind, and of its kind and limit key (jobs_running_limits):
-- what its detail says when a limit holds it back.
SELECT
    (SELECT COUNT(*) FROM jobs r WHERE r.status = 'running' AND r.kind = j.kind),
    (SELECT COUNT(*) FROM jobs r WHERE r.status = 'running' AND r.kind = j.kind
        AND COALESCE(r.limit_key, '') = COALESCE(j.limit_key, ''))
FROM jobs j WHERE j.id = :id
