-- Pairs of :fair_keys and :turns (arrays, PostgresEngine.values), by position.
SELECT fair_key, turn FROM unnest(:fair_keys::text[], :turns::bigint[]) AS t(fair_key, turn)
