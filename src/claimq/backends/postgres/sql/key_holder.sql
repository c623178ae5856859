-- The job holding an idempotency key, and whether it still holds it under the enqueue's
-- `unique` scope (_key_held.sql). `status`: the live holder's, else NULL. FOR UPDATE
-- serialises take-overs of an expired key and replacements of a pending holder.
SELECT k.job_id,
       {key_held} AS holds,
       (SELECT j.status FROM {schema}.jobs j WHERE j.id = k.job_id) AS status
FROM {schema}.idempotency_keys k
WHERE k.key = %(key)s
FOR UPDATE OF k
