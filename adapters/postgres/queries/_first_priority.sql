-- The first priority after :after at which :kind has a due job in a ``probed`` queue
-- (_kind_queues), none held ahead (NULL: none): the first row of each queue, one seek each.
SELECT MIN((
    SELECT priority FROM jobs
    WHERE status = 'queued' AND kind = :kind AND held_by IS NULL
      AND (queue, priority) > (probed.queue, :after::smallint) AND queue <= probed.queue
    ORDER BY queue, priority LIMIT 1
)) FROM probed
