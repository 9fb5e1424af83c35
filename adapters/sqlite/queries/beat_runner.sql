UPDATE jobtable_runners SET beat = beat + 1, busy = :busy, last_seen = :now WHERE id = :id
