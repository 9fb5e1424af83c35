-- 0015_schedule_listing: each runner records the schedules it runs at start (their kind,
-- expression, time zone and queue), so any process can list them with their next run
-- and last tick (GET /api/v1/schedules, `jobtable schedules`). A schedule's row stays
-- as the last runner to start with it recorded it.
ALTER TABLE jobtable_schedules ADD COLUMN kind TEXT;
ALTER TABLE jobtable_schedules ADD COLUMN expression TEXT;
ALTER TABLE jobtable_schedules ADD COLUMN timezone TEXT;
ALTER TABLE jobtable_schedules ADD COLUMN queue TEXT;
ALTER TABLE jobtable_schedules ADD COLUMN recorded_at TEXT;
