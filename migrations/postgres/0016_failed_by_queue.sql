-- 0016_failed_by_queue: a queue's failed jobs by code, read from this index alone, so its
-- counts by state (cancelled, timed_out, failed) cost what its counts by status do. Only a
-- job that fails enters it: the hot path of jobs that succeed never writes it.
CREATE INDEX jobs_failed_by_queue ON jobs (queue, error) WHERE status = 'failed';
