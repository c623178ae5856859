SELECT *, 'succeeded' AS status FROM claimq_archive
WHERE {find_where}
  AND (:status IS NULL OR :status = 'succeeded')
ORDER BY id DESC
LIMIT :limit
