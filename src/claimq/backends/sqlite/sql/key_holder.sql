-- The job holding an idempotency key, and whether it still holds it (live, or finished inside
-- the retention window).
SELECT k.job_id,
       EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = k.job_id)
       OR EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = k.job_id AND a.finished_at >= :since)
       OR EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = k.job_id AND d.finished_at >= :since)
       AS holds
FROM claimq_idempotency k
WHERE k.key = :key
