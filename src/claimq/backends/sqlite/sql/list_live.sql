SELECT * FROM claimq_jobs
WHERE (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
  AND (:status IS NULL OR status = :status)
ORDER BY id
LIMIT :limit OFFSET :offset
