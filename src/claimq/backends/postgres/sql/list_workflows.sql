{workflow_info}
WHERE (%(before)s::bigint IS NULL OR w.id < %(before)s)
ORDER BY w.id DESC
LIMIT %(limit)s
