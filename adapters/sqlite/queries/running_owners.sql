-- Owners of running jobs that have no row in the runners table (reads jobs_running).
SELECT DISTINCT claimed_by FROM jobs
WHERE status = 'running'
  AND NOT EXISTS (SELECT 1 FROM jobtable_runners r WHERE r.id IS jobs.claimed_by)
