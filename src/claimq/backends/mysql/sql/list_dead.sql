SELECT *, 'dead' AS status FROM claimq_dead
WHERE (%(queue)s IS NULL OR queue = %(queue)s)
  AND (%(task)s IS NULL OR task = %(task)s)
  AND (%(status)s IS NULL OR reason = %(status)s)
ORDER BY finished_at DESC, id DESC
LIMIT %(limit)s OFFSET %(offset)s
