-- A job's last reported progress, while the job is in some table (a job pruned or purged has
-- none, even before the pruner removes its row: prune_progress.sql).
SELECT p.fraction, p.note, p.attempt, p.updated_at FROM claimq_progress p
WHERE p.job_id = %(id)s
  AND (EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = p.job_id)
       OR EXISTS (SELECT 1 FROM claimq_archive a WHERE a.id = p.job_id)
       OR EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = p.job_id))
