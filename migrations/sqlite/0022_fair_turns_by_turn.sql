-- 0022_fair_turns_by_turn: a fair kind's last turn is read by an index seek. A fair claim
-- numbers its turns on from the kind's last (max(turn)), and jobtable_fair_turns keeps a
-- row for every key the kind ever had: without this index that read went through all of
-- them, each claim (100,000 keys: with a claim's other reads of every key's turn, 11 ms a
-- claim on SQLite and 29 ms on PostgreSQL; bench/fair_keys.py).
CREATE INDEX jobtable_fair_turns_by_turn ON jobtable_fair_turns (kind, turn);
