-- The job holding an idempotency key, and whether it still holds it (live, or finished inside
-- the retention window). FOR UPDATE serialises take-overs of an expired key.
SELECT k.job_id,
       EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = k.job_id)
       OR EXISTS (SELECT 1 FROM {schema}.archive a
                  WHERE a.id = k.job_id AND a.finished_at >= {now} - make_interval(secs => %(retention)s))
       OR EXISTS (SELECT 1 FROM {schema}.dead d
                  WHERE d.id = k.job_id AND d.finished_at >= {now} - make_interval(secs => %(retention)s))
       AS holds
FROM {schema}.idempotency_keys k
WHERE k.key = %(key)s
FOR UPDATE
