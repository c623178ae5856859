SELECT *, 'dead' AS status FROM {schema}.dead
WHERE (%(queue)s::text IS NULL OR queue = %(queue)s)
  AND (%(task)s::text IS NULL OR task = %(task)s)
  AND (%(status)s::text IS NULL OR reason = %(status)s)
ORDER BY finished_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s
