-- A fair key had its turn: it goes to the back of the line, numbered :turn, after every
-- other key's (the claim read the kind's turns under its lock, so no two take one number).
INSERT INTO jobtable_fair_turns (kind, fair_key, turn)
VALUES (:kind, :fair_key, :turn)
ON CONFLICT (kind, fair_key) DO UPDATE SET turn = excluded.turn
