SELECT *, 'succeeded' AS status FROM claimq_archive
WHERE {find_where}
  AND (%(status)s IS NULL OR %(status)s = 'succeeded')
ORDER BY id DESC
LIMIT %(limit)s
