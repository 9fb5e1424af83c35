-- One start of a rate-limited kind's job, counted by later claims while in the window.
INSERT INTO jobtable_starts (kind, rate_key, started_at) VALUES (:kind, :rate_key, :now)
