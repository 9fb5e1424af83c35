SELECT first_seen FROM jobtable_schedules WHERE name = :name
