-- Jobs a worker holds in the database but not in memory, their leases still running: claims
-- whose responses it never received. It hands them back (release) rather than wait out the lease.
SELECT j.id, j.claim_token::text AS claim_token
FROM {schema}.jobs j
WHERE j.status IN ('fetched', 'processing') AND j.worker_id = %(worker_id)s
  AND j.lease_until > {now} AND NOT (j.id = ANY(%(held)s::bigint[]))
