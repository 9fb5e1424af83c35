-- Rows another transaction holds are passed by, not waited for.
FOR UPDATE SKIP LOCKED
