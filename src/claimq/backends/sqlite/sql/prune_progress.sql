-- purge_progress.sql a bounded batch at a time (the pruner): progress rows whose job is gone
-- from every table (pruned or purged).
DELETE FROM claimq_progress WHERE job_id IN (
    SELECT p.job_id FROM claimq_progress p
    WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = p.job_id)
      AND NOT EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = p.job_id)
      AND NOT EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = p.job_id)
    LIMIT :batch
)
