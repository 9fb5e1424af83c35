-- Marks the jobs _pick_next picks running under :runner_id, and returns what running and
-- settling each needs; no row when none is due. One statement claims a whole batch.
{{pick_next}}
{{claim_picked}}
