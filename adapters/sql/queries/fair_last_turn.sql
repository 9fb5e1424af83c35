-- A fair kind's last turn (NULL: none yet), from which a claim numbers the turns it gives:
-- one seek in jobtable_fair_turns_by_turn, however many keys the kind ever had.
SELECT max(turn) FROM jobtable_fair_turns WHERE kind = :kind
