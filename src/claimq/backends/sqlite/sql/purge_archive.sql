-- A row of a workflow with a job still live or held stays.
DELETE FROM claimq_archive AS t
WHERE (:before IS NULL OR t.finished_at < :before)
  AND (:queue IS NULL OR t.queue = :queue)
  AND (:task IS NULL OR t.task = :task)
  AND {workflow_done}
