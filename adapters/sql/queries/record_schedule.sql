-- A schedule's first sighting is kept: ticks from before it (a first deploy) never run.
INSERT INTO jobtable_schedules (name, first_seen) VALUES (:name, :now)
ON CONFLICT (name) DO NOTHING
