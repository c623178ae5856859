SELECT *, 'succeeded' AS status FROM {schema}.archive
WHERE (%(queue)s::text IS NULL OR queue = %(queue)s)
  AND (%(task)s::text IS NULL OR task = %(task)s)
ORDER BY finished_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s
