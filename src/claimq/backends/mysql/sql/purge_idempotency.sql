DELETE FROM claimq_idempotency
WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = claimq_idempotency.job_id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive a
                  WHERE a.id = claimq_idempotency.job_id
                    AND a.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
  AND NOT EXISTS (SELECT 1 FROM claimq_dead d
                  WHERE d.id = claimq_idempotency.job_id
                    AND d.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
