-- purge_idempotency.sql a bounded batch at a time (the pruner).
DELETE FROM claimq_idempotency WHERE key IN (
    SELECT k.key FROM claimq_idempotency k
    WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = k.job_id)
      AND NOT EXISTS (SELECT 1 FROM claimq_archive a
                      WHERE a.id = k.job_id AND a.finished_at >= :since)
      AND NOT EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = k.job_id AND d.finished_at >= :since)
    LIMIT :batch
)
