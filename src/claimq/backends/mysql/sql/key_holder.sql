-- The job holding an idempotency key, and whether it still holds it under the enqueue's
-- `unique` scope (_key_held.sql); `status`: the live holder's, else NULL. The key's row stays
-- locked for the rest of the enqueue.
SELECT k.job_id,
       {key_held} AS holds,
       (SELECT j.status FROM claimq_jobs j WHERE j.id = k.job_id) AS status
FROM claimq_idempotency k
WHERE k.`key` = %(key)s
FOR UPDATE
