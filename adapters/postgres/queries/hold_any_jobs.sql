-- As hold_next_jobs, for a caller that serves every kind.
{{pick_any}}
{{hold_picked}}
