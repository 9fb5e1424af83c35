-- Whether the job's unique key is held by another job now (the job itself does not hold
-- it: it has ended): an operator's retry would take it again, so it is refused.
jobs.unique_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM jobs AS holder
    WHERE holder.kind = jobs.kind AND holder.unique_key = jobs.unique_key
      AND holder.id <> jobs.id AND {{holds_unique_key}})
