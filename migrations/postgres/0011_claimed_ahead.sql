-- 0011_claimed_ahead: a runner whose handlers are short holds a few due jobs ahead of its
-- workers (held_by: its id). A held job stays 'queued' (no started_at, no attempt
-- counted, no history written) until a worker starts it, and other claims pass it by.
-- It is given back (held_by cleared) at stop, when its runner loses liveness, when it
-- waited past the bound, or when its runner is settled dead. Only held rows are in
-- jobs_held, so a runner's give-back finds its own at once however deep the queue is.
ALTER TABLE jobs ADD COLUMN held_by TEXT;
CREATE INDEX jobs_held ON jobs (held_by) WHERE held_by IS NOT NULL;
