SELECT * FROM claimq_jobs
WHERE {find_where}
  AND (:status IS NULL OR status = :status)
ORDER BY id DESC
LIMIT :limit
