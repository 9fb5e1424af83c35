-- Membership in :ids, a JSON array of job ids (SqliteEngine.names).
IN (SELECT value FROM json_each(:ids))
