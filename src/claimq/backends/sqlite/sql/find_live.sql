-- Live jobs, held workflow jobs among them (status 'held').
SELECT {job_read} FROM claimq_jobs j
WHERE {find_where}
  AND (:status IS NULL OR status = :status)
  AND (:state IS NULL OR {in_state})
UNION ALL
SELECT {held_read} FROM claimq_held
WHERE {find_where}
  AND (:status IS NULL OR :status = 'held')
  AND (:state IS NULL OR :state = 'held')
ORDER BY id DESC
LIMIT :limit
