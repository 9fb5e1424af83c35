-- The last turn of each of :fair_keys that had one, for a kind (the lowest goes next; a
-- key with none never had a turn): a seek per key, not a read of every key the kind ever
-- had. LATERAL with OFFSET 0 keeps it so: given a long list (or no statistics yet), the
-- planner would hash the kind's every turn.
SELECT k.fair_key, t.turn
FROM unnest(:fair_keys::text[]) AS k(fair_key)
CROSS JOIN LATERAL (
    SELECT turn FROM jobtable_fair_turns
    WHERE kind = :kind AND fair_key = k.fair_key
    OFFSET 0
) AS t
