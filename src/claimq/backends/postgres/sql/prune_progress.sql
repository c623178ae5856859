-- purge_progress.sql a bounded batch at a time (the pruner), never waiting on a row: progress
-- rows whose job is gone from every table (pruned or purged).
WITH doomed AS (
    SELECT p.job_id FROM {schema}.progress p
    WHERE NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = p.job_id)
      AND NOT EXISTS (SELECT 1 FROM {schema}.archive a WHERE a.id = p.job_id)
      AND NOT EXISTS (SELECT 1 FROM {schema}.dead d WHERE d.id = p.job_id)
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.progress p USING doomed d WHERE p.job_id = d.job_id
