-- The last turn of each of :fair_keys that had one, for a kind (the lowest goes next; a
-- key with none never had a turn): a seek per key, not a read of every key the kind ever
-- had.
SELECT t.fair_key, t.turn
FROM unnest(:fair_keys::text[]) AS k(fair_key)
JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = k.fair_key
