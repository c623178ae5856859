-- Jobs a worker holds in the database, their leases still running (the caller leaves out those
-- it knows): claims whose responses it never received.
SELECT id, claim_token
FROM claimq_jobs
WHERE status IN ('fetched', 'processing') AND worker_id = %(worker_id)s AND lease_until > {now}
