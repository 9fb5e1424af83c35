-- Fair keys had their turns: each goes to the back of the line, numbered by :turns (in
-- the order of :fair_keys), after every other key's (the claim read the kind's turns under
-- its lock, so no two take one number). One statement for a claim's keys of one kind,
-- each key once (its last turn).
INSERT INTO jobtable_fair_turns (kind, fair_key, turn)
SELECT :kind, given.fair_key, given.turn FROM ({{fair_turns_given}}) AS given
WHERE true
ON CONFLICT (kind, fair_key) DO UPDATE SET turn = excluded.turn
