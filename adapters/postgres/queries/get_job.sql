SELECT id, kind, status, result, error FROM jobs WHERE id = %(id)s
