-- Flow control flat under a backlog (issue 27): a flow claim whose first rows in claim order
-- are held back (a concurrency key at its limit, sequence jobs) reads the pending jobs that are
-- not sequence jobs one concurrency key at a time (a skip scan: one probe per key, the jobs
-- without a key as one more), never row by row through the backlog (claim_flow.sql,
-- claim_keyed.sql: `deep`).
CREATE INDEX jobs_keyed_claimable ON {schema}.jobs (queue, concurrency_key, priority DESC, run_at, id)
    WHERE status = 'pending' AND sequence_key IS NULL;
