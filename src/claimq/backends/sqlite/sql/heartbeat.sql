-- :items is a JSON array of [id, token]: one statement for every job in flight.
UPDATE claimq_jobs
SET lease_until = :now + coalesce(:lease, (SELECT q.lease_seconds FROM claimq_queues q
                                          WHERE q.name = claimq_jobs.queue)),
    heartbeat_at = :now
FROM json_each(:items) AS d
WHERE claimq_jobs.id = d.value ->> 0 AND claimq_jobs.claim_token = d.value ->> 1
  AND claimq_jobs.status IN ('fetched', 'processing')
RETURNING claimq_jobs.id, claimq_jobs.cancel_requested
