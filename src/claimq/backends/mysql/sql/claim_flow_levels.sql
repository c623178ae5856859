-- Priority aging: the priority levels below the top one (%(low)s up to %(top)s) that have due
-- jobs, highest first: the claim reads the oldest jobs of each (claim_flow_candidates).
SELECT DISTINCT priority
FROM claimq_jobs
WHERE queue = %(queue)s AND status = 'pending' AND run_at <= {now} AND sequence_key IS NULL
  AND priority >= %(low)s AND priority < %(top)s
ORDER BY priority DESC
