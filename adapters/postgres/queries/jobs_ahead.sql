-- How many due jobs of the same kind and queue come before this one in claim order.
SELECT count(*) FROM jobs
WHERE status = 'queued' AND kind = %(kind)s AND queue = %(queue)s
  AND (priority, run_at, id) < (%(priority)s::smallint, %(run_at)s::timestamptz, %(id)s::text)
