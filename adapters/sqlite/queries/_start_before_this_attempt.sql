-- When the job started before this claim: never (NULL) before its first attempt, else at
-- the start of the last attempt logged (every attempt that ended and left the job to run
-- again is logged, the last one always kept).
CASE WHEN json_valid(attempts_log) THEN json_extract(attempts_log, '$[#-1].started_at') END
