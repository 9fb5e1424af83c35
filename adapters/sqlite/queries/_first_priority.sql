-- The first priority after :after at which :kind has a due job in a ``probed`` queue
-- (_kind_queues), none held ahead (NULL: none): the first row of each queue, one seek each.
SELECT MIN((
    SELECT priority FROM jobs INDEXED BY jobs_ready_in_queue
    WHERE status = 'queued' AND kind = :kind AND queue = probed.queue AND held_by IS NULL
      AND priority > :after
    ORDER BY priority LIMIT 1
)) FROM probed
