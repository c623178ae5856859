SELECT *, 'dead' AS status FROM claimq_dead
WHERE {find_where}
  AND (%(status)s IS NULL OR reason = %(status)s)
ORDER BY id DESC
LIMIT %(limit)s
