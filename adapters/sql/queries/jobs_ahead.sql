-- How many due jobs of the same kind and queue come before this one in claim order.
SELECT count(*) FROM jobs
WHERE status = 'queued' AND kind = :kind AND queue = :queue
  AND (priority, run_at, id) < (:priority, :run_at, :id)
