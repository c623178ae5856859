SELECT *, 'dead' AS status FROM {schema}.dead
WHERE {find_where}
  AND (%(status)s::text IS NULL OR reason = %(status)s)
ORDER BY id DESC
LIMIT %(limit)s
