SELECT *, 'dead' AS status FROM claimq_dead
WHERE (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
  AND (:status IS NULL OR reason = :status)
ORDER BY finished_at DESC, id DESC
LIMIT :limit OFFSET :offset
