-- Jobs a worker holds in the database but not in memory, their leases still running: claims
-- whose responses it never received. It hands them back (release) rather than wait out the lease.
SELECT id, claim_token
FROM claimq_jobs
WHERE status IN ('fetched', 'processing') AND worker_id = :worker_id AND lease_until > :now
  AND id NOT IN (SELECT value FROM json_each(:held))
