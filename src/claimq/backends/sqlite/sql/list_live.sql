-- Live jobs, held workflow jobs among them (status 'held').
SELECT {job_read} FROM claimq_jobs
WHERE (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
  AND (:status IS NULL OR status = :status)
UNION ALL
SELECT {held_read} FROM claimq_held
WHERE (:queue IS NULL OR queue = :queue)
  AND (:task IS NULL OR task = :task)
  AND (:status IS NULL OR :status = 'held')
ORDER BY id
LIMIT :limit OFFSET :offset
