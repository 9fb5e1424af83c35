-- A job's stored status and failure code: why a cancel or a retry changed nothing.
SELECT status, error FROM jobs WHERE id = :id
