-- The number of each fair key's last turn (a job claimed) for a kind: the lowest goes next.
SELECT fair_key, turn FROM jobtable_fair_turns WHERE kind = :kind
