DELETE FROM jobtable_minutes WHERE minute < :before
