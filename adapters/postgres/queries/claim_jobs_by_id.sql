-- Marks the jobs :ids names running under :runner_id, those still queued and held by no
-- runner (a cancel since the pick wins: FOR UPDATE reads each row's latest version), and
-- returns what running and settling each needs.
WITH picked AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE id = ANY(:ids::text[]) AND status = 'queued' AND held_by IS NULL
    FOR UPDATE SKIP LOCKED
)
{{claim_picked}}
