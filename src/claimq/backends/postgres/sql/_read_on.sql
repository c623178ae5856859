-- The read on past a flow claim's first rows, by key ({key_jobs}) and without a key
-- ({keyless_jobs}): due pending jobs `j` that are not sequence jobs, with the columns the claim
-- needs; the caller adds the queue, the key, the claim order and the LIMIT. It passes over,
-- inside the read (before its LIMIT), the jobs the claim may not take for their task's circuit
-- breaker or their rate key, with `shut` (queue, task: a breaker that holds the task back) and
-- `paused` (queue, key: a rate key with no token, throttled or its bucket empty): after the
-- LIMIT, a run of them at the head (of a key, or of the jobs without one) took the whole LIMIT
-- and held back every job behind it.
-- One NOT over both tests: a NOT EXISTS standing alone in the WHERE is planned as an anti join,
-- and the generic plan of a key's read then sorted the key's whole backlog instead of reading
-- its index in order (test_postgres_flow_backlog); inside the NOT, each stays a subplan on
-- that read, hashed (the two CTEs are read once).
SELECT j.id, j.queue, j.task, j.priority, j.run_at, j.concurrency_key, j.concurrency_limit,
       j.rate_key
FROM {schema}.jobs j
WHERE j.status = 'pending' AND j.sequence_key IS NULL AND j.run_at <= {now}
  AND NOT (EXISTS (SELECT 1 FROM shut g WHERE g.queue = j.queue AND g.task = j.task)
           OR EXISTS (SELECT 1 FROM paused p WHERE p.queue = j.queue AND p.key = j.rate_key))
