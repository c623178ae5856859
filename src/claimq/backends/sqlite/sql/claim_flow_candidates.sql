-- A flow-controlled queue's first due jobs in claim order, of any kind (sequence jobs too: the
-- claim drops them, their heads come from claim_sequence_heads.sql): a bounded read (:window
-- rows). When they hold too many back, the claim reads on by key (claim_flow_keys.sql).
SELECT id, task, priority, run_at, concurrency_key, concurrency_limit, rate_key, sequence_key
FROM claimq_jobs
WHERE queue = :queue AND status = 'pending' AND run_at <= :now
ORDER BY priority DESC, run_at, id
LIMIT :window
