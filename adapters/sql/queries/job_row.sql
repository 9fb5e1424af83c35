-- Every column of a job's row, for inspection and tests.
SELECT * FROM jobs WHERE id = :id
