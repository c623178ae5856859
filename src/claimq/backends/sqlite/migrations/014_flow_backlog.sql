-- Flow control flat under a backlog (issue 27): a flow claim whose first rows in claim order
-- are held back (a concurrency key at its limit, sequence jobs) reads on one concurrency key at
-- a time (a skip scan: one probe per key, the jobs without a key as one more), never row by row
-- through the backlog (claim_flow_keys.sql, claim_flow_key_jobs.sql, claim_flow_unkeyed.sql).
CREATE INDEX claimq_jobs_keyed_claimable
    ON claimq_jobs (queue, concurrency_key, priority DESC, run_at, id)
    WHERE status = 'pending' AND sequence_key IS NULL;
