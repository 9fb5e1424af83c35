-- The starts of rate-limited jobs (:ids) a claim took at :now, each under its kind and its
-- own rate key (whatever the claim knew of it), counted by later claims while in the
-- window. One statement for a claim's starts of one kind.
INSERT INTO jobtable_starts (kind, rate_key, started_at)
SELECT kind, rate_key, :now FROM jobs WHERE id {{in_ids}}
