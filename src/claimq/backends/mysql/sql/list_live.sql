SELECT * FROM claimq_jobs
WHERE (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
  AND (%(status)s IS NULL OR status = %(status)s)
ORDER BY id
LIMIT %(limit)s OFFSET %(offset)s
