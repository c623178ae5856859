SELECT * FROM claimq_jobs
WHERE {find_where}
  AND (%(status)s IS NULL OR status = %(status)s)
ORDER BY id DESC
LIMIT %(limit)s
