-- A change of a queue's limits waits at most 5 s for the claims and reads in flight (claims
-- queue behind it meanwhile): past that it fails, and the operator tries again.
SELECT set_config('lock_timeout', '5000', true)
