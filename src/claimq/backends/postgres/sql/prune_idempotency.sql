-- purge_idempotency.sql a bounded batch at a time (the pruner), never waiting on a row.
WITH doomed AS (
    SELECT k.key FROM {schema}.idempotency_keys k
    WHERE NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = k.job_id)
      AND NOT EXISTS (SELECT 1 FROM {schema}.archive a
                      WHERE a.id = k.job_id
                        AND a.finished_at >= {now} - make_interval(secs => %(retention)s))
      AND NOT EXISTS (SELECT 1 FROM {schema}.dead d
                      WHERE d.id = k.job_id
                        AND d.finished_at >= {now} - make_interval(secs => %(retention)s))
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.idempotency_keys k USING doomed d WHERE k.key = d.key
