-- The job holding an idempotency key, and whether it still holds it (live, or finished inside
-- the retention window); the key's row stays locked for the rest of the enqueue.
SELECT k.job_id,
       EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = k.job_id)
       OR EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = k.job_id
                  AND a.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
       OR EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = k.job_id
                  AND d.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
       AS holds
FROM claimq_idempotency k
WHERE k.`key` = %(key)s
FOR UPDATE
