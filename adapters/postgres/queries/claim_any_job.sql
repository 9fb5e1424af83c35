-- As claim_next_job, for a caller that serves every kind (tests, tools).
{{pick_any}}
{{claim_picked}}
