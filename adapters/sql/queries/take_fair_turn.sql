-- A fair key had its turn: it goes to the back of the line, numbered after every other
-- key's (claims of the kind take turns under its lock, so no two take one number).
INSERT INTO jobtable_fair_turns (kind, fair_key, turn)
VALUES (
    :kind, :fair_key,
    (SELECT COALESCE(MAX(turn), 0) + 1 FROM jobtable_fair_turns WHERE kind = :kind)
)
ON CONFLICT (kind, fair_key) DO UPDATE SET turn = excluded.turn
