-- end_attempts' rows, from :rows, a JSON array of objects.
jsonb_to_recordset(:rows::jsonb)
    AS ended(id text, runner_id text, attempt integer, status text, result text, code text)
