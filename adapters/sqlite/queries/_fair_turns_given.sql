-- Pairs of :fair_keys and :turns (JSON arrays, SqliteEngine.values), by position.
SELECT k.value AS fair_key, t.value AS turn
FROM json_each(:fair_keys) AS k JOIN json_each(:turns) AS t ON t.key = k.key
