DELETE FROM jobtable_minute_waits WHERE minute < :before
