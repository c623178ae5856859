-- The job holding an idempotency key, and whether it still holds it: live in one of the
-- statuses the enqueue's `unique` scope names, or finished less than `period` seconds ago
-- (NULL: a finished job holds nothing). `status`: the live holder's, else NULL. FOR UPDATE
-- serialises take-overs of an expired key and replacements of a pending holder.
SELECT k.job_id,
       EXISTS (SELECT 1 FROM {schema}.jobs j
               WHERE j.id = k.job_id AND j.status = ANY(%(statuses)s::text[]))
       OR EXISTS (SELECT 1 FROM {schema}.archive a
                  WHERE a.id = k.job_id AND a.finished_at >= {now} - make_interval(secs => %(period)s::float8))
       OR EXISTS (SELECT 1 FROM {schema}.dead d
                  WHERE d.id = k.job_id AND d.finished_at >= {now} - make_interval(secs => %(period)s::float8))
       AS holds,
       (SELECT j.status FROM {schema}.jobs j WHERE j.id = k.job_id) AS status
FROM {schema}.idempotency_keys k
WHERE k.key = %(key)s
FOR UPDATE OF k
