SELECT * FROM {schema}.jobs
WHERE {find_where}
  AND (%(status)s::text IS NULL OR status = %(status)s)
ORDER BY id DESC
LIMIT %(limit)s
