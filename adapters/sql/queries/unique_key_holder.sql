-- The job a unique key is held by, among its kind's.
SELECT id FROM jobs WHERE kind = :kind AND unique_key = :unique_key AND {{holds_unique_key}}
