-- When the earliest scheduled job falls due (NULL: none is). A time Python cannot
-- hold (infinity, past year 9999) is passed over.
SELECT min(run_at) FROM jobs
WHERE status = 'scheduled' AND run_at >= '0001-01-02' AND run_at < '9999-12-30'
