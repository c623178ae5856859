SELECT *, 'dead' AS status FROM claimq_dead
WHERE {find_where}
  AND (:status IS NULL OR reason = :status)
ORDER BY id DESC
LIMIT :limit
