-- The last turn of each of :fair_keys that had one, for a kind (the lowest goes next; a
-- key with none never had a turn): a seek per key, not a read of every key the kind ever
-- had, but where the planner finds it cheaper (thousands of keys: it may hash the kind's
-- turns, faster then than as many seeks; bench/README.md).
SELECT t.fair_key, t.turn
FROM unnest(:fair_keys::text[]) AS k(fair_key)
JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = k.fair_key
