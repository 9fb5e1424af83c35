-- A runner's last beat, the evidence it is dead re-read before its jobs are settled; where
-- rows can be locked, locked until commit: one settler at a time, and no beat can land
-- between this check and the settling.
SELECT beat FROM jobtable_runners WHERE id = :id {{lock_row}}
