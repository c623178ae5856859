-- Progress rows whose job is gone from every table (purged).
DELETE FROM {schema}.progress p
WHERE NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = p.job_id)
  AND NOT EXISTS (SELECT 1 FROM {schema}.archive a WHERE a.id = p.job_id)
  AND NOT EXISTS (SELECT 1 FROM {schema}.dead d WHERE d.id = p.job_id)
