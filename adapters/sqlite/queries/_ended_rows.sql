-- end_attempts' rows, from :rows, a JSON array of objects.
(SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.runner_id') AS runner_id,
        json_extract(value, '$.attempt') AS attempt, json_extract(value, '$.status') AS status,
        json_extract(value, '$.result') AS result, json_extract(value, '$.code') AS code
 FROM json_each(:rows)) AS ended
