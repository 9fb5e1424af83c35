-- A schedule as the runner starting now runs it. Its first sighting is kept: ticks from
-- before it (a first deploy) never run.
INSERT INTO jobtable_schedules (name, first_seen, kind, expression, timezone, queue, recorded_at)
VALUES (:name, :now, :kind, :expression, :timezone, :queue, :now)
ON CONFLICT (name) DO UPDATE
SET kind = excluded.kind, expression = excluded.expression, timezone = excluded.timezone,
    queue = excluded.queue, recorded_at = excluded.recorded_at
