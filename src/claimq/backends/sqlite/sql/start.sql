-- The gate between claim and handler: only the current owner of a fetched job may start it.
-- :items is a JSON array of [id, token].
UPDATE claimq_jobs
SET status = 'processing',
    attempts = attempts + 1,
    started_at = :now,
    heartbeat_at = :now,
    lease_until = coalesce(:now + :lease, lease_until),
    updated_at = :now
FROM json_each(:items) AS d
WHERE claimq_jobs.id = d.value ->> 0 AND claimq_jobs.claim_token = d.value ->> 1
  AND claimq_jobs.status = 'fetched' AND claimq_jobs.cancel_requested = 0
RETURNING claimq_jobs.id, claimq_jobs.attempts
