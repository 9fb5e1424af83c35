-- The last turn of each of :fair_keys (a JSON array) that had one, for a kind (the lowest
-- goes next; a key with none never had a turn): a seek per key, not a read of every key
-- the kind ever had. CROSS JOIN keeps the keys outside: without statistics SQLite would
-- read the kind's turns and scan the JSON array for each.
SELECT t.fair_key, t.turn
FROM json_each(:fair_keys) AS k
CROSS JOIN jobtable_fair_turns AS t ON t.kind = :kind AND t.fair_key = k.value
