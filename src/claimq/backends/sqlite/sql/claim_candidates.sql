-- One queue's next jobs in claim order; :skip (a JSON array, NULL: none) names tasks the
-- claimer cannot run, passed over for another worker.
SELECT id, priority, run_at
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND run_at <= :now
  AND (:skip IS NULL OR task NOT IN (SELECT value FROM json_each(:skip)))
ORDER BY priority DESC, run_at, id
LIMIT :limit
