-- Priority aging: the next priority level below %(below)s, down to %(floor)s, that holds pending
-- jobs of the queue (one probe of claimq_jobs_claimable): the claim reads the levels that exist,
-- never every level of aging_cap (a cap of 1,000 made 1,000 reads a claim).
SELECT priority FROM claimq_jobs
WHERE queue = %(queue)s AND status = 'pending' AND priority < %(below)s AND priority >= %(floor)s
ORDER BY priority DESC
LIMIT 1
