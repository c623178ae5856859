SELECT *, 'succeeded' AS status FROM {schema}.archive
WHERE {find_where}
  AND (%(status)s::text IS NULL OR %(status)s = 'succeeded')
ORDER BY id DESC
LIMIT %(limit)s
