-- A job's history, written once per statement instead of once per row. Batched claims
-- and outcomes change many jobs in one UPDATE; the row trigger of 0005 ran its function
-- (and sent a NOTIFY) for each of them, about 50 µs a row. This one sees every row the
-- statement changed at once (transition tables), numbers and stores their changes in
-- one INSERT, and tells listeners in one NOTIFY per 200 jobs (their ids, space-separated).
-- What it records is what 0005 recorded: a visible change of status (scheduled counts
-- as queued), result or error, numbered per job, the last 1,000 kept. A trigger with
-- transition tables may not name columns, so it fires on every UPDATE of jobs and looks
-- for visible changes itself.
DROP TRIGGER jobs_changed ON jobs;
DROP FUNCTION jobtable_job_changed();

CREATE FUNCTION jobtable_jobs_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    notices bigint;
BEGIN
    WITH changed AS (
        SELECT n.id,
               CASE n.status WHEN 'scheduled' THEN 'queued' ELSE n.status END AS status,
               n.result,
               n.error
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (CASE o.status WHEN 'scheduled' THEN 'queued' ELSE o.status END)
                  IS DISTINCT FROM (CASE n.status WHEN 'scheduled' THEN 'queued' ELSE n.status END)
           OR o.result IS DISTINCT FROM n.result
           OR o.error IS DISTINCT FROM n.error
    ), added AS (
        INSERT INTO job_events (job_id, version, status, result, error)
        SELECT c.id,
               coalesce((SELECT max(e.version) FROM job_events e WHERE e.job_id = c.id), 0) + 1,
               c.status, c.result, c.error
        FROM changed c
        RETURNING job_id, version
    ), trimmed AS (
        DELETE FROM job_events e USING added a
        WHERE a.version > 1000 AND e.job_id = a.job_id AND e.version <= a.version - 1000
    )
    SELECT count(pg_notify(left('jobtable_events_' || TG_TABLE_SCHEMA, 63), ids))
    INTO notices
    FROM (
        SELECT string_agg(job_id, ' ') AS ids
        FROM (SELECT job_id, (row_number() OVER ()) / 200 AS chunk FROM added) numbered
        GROUP BY chunk
    ) chunks;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_changed AFTER UPDATE ON jobs
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION jobtable_jobs_changed();
