-- The job holding an idempotency key, and whether it still holds it: live in one of the
-- statuses the enqueue's `unique` scope names (:statuses, a JSON array), or finished since
-- :since (NULL: a finished job holds nothing). `status`: the live holder's, else NULL.
SELECT k.job_id,
       EXISTS (SELECT 1 FROM claimq_jobs j
               WHERE j.id = k.job_id AND j.status IN (SELECT value FROM json_each(:statuses)))
       OR EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = k.job_id AND a.finished_at >= :since)
       OR EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = k.job_id AND d.finished_at >= :since)
       AS holds,
       (SELECT j.status FROM claimq_jobs j WHERE j.id = k.job_id) AS status
FROM claimq_idempotency k
WHERE k.key = :key
