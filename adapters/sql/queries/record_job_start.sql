-- One start of a rate-limited job, under its kind and its own rate key (whatever the
-- claim knew of it), counted by later claims while in the window.
INSERT INTO jobtable_starts (kind, rate_key, started_at)
SELECT kind, rate_key, :now FROM jobs WHERE id = :id
