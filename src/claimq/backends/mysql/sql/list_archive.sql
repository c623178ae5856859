SELECT *, 'succeeded' AS status FROM claimq_archive
WHERE (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
ORDER BY finished_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s
