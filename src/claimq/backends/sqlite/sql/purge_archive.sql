DELETE FROM claimq_archive
WHERE (:before IS NULL OR finished_at < :before)
  AND (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
