-- Progress rows whose job is gone from every table (purged).
DELETE FROM claimq_progress
WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = claimq_progress.job_id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = claimq_progress.job_id)
  AND NOT EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = claimq_progress.job_id)
