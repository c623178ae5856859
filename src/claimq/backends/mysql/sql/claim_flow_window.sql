-- A flow-controlled queue's first due jobs in claim order, of any kind (a plain read, READ
-- COMMITTED: the latest; at most %(window)s rows): whether they hold enough jobs the claim may
-- take, or it reads on by key (claim_flow_keys).
SELECT id, concurrency_key, concurrency_limit, sequence_key
FROM claimq_jobs
WHERE queue = %(queue)s AND status = 'pending' AND run_at <= {now}
ORDER BY priority DESC, run_at, id
LIMIT %(window)s
