-- The job holding an idempotency key, and whether it still holds it: live in one of the statuses
-- the enqueue's `unique` scope names (%(statuses)s, a JSON array), or finished inside the
-- retention window (%(retention_us)s; NULL: a finished job holds nothing); `status`: the live
-- holder's, else NULL. The key's row stays locked for the rest of the enqueue.
SELECT k.job_id,
       EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = k.job_id
               AND JSON_CONTAINS(%(statuses)s, JSON_QUOTE(j.status)))
       OR EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = k.job_id
                  AND a.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
       OR EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = k.job_id
                  AND d.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
       AS holds,
       (SELECT j.status FROM claimq_jobs j WHERE j.id = k.job_id) AS status
FROM claimq_idempotency k
WHERE k.`key` = %(key)s
FOR UPDATE
