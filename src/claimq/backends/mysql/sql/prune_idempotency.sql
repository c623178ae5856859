-- purge_idempotency.sql a bounded batch at a time (the pruner): the keys, locked for their
-- DELETE (delete_keys.sql); SKIP LOCKED: never waits on a key being taken.
SELECT k.`key` FROM claimq_idempotency k
WHERE NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = k.job_id)
  AND NOT EXISTS (SELECT 1 FROM claimq_archive a
                  WHERE a.id = k.job_id
                    AND a.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
  AND NOT EXISTS (SELECT 1 FROM claimq_dead d
                  WHERE d.id = k.job_id
                    AND d.finished_at >= TIMESTAMPADD(MICROSECOND, -%(retention_us)s, {now}))
LIMIT %(batch)s
FOR UPDATE SKIP LOCKED
