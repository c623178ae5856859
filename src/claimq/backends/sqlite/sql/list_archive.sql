SELECT *, 'succeeded' AS status FROM claimq_archive
WHERE (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
ORDER BY finished_at DESC, id DESC
LIMIT :limit OFFSET :offset
