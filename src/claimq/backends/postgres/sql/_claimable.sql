-- Whether a flow claim may take job `j` as far as its task's circuit breaker and its rate key
-- go, with `shut` (queue, task: a breaker that holds the task back) and `paused` (queue, key: a
-- rate key with no token, throttled or its bucket empty). The reads on past the claim's first
-- rows (by key: {key_jobs}; without a key: {keyless_jobs}) pass over such jobs inside the
-- read, before its LIMIT: after it, a run of them at the head (of a key, or of the jobs
-- without one) took the whole LIMIT and held back every job behind it.
-- One NOT over both tests: a NOT EXISTS standing alone in the WHERE is planned as an anti join,
-- and the generic plan of a key's read then sorted the key's whole backlog instead of reading
-- its index in order (test_postgres_flow_backlog); inside the NOT, each stays a subplan on
-- that read, hashed (the two CTEs are read once).
NOT (EXISTS (SELECT 1 FROM shut g WHERE g.queue = j.queue AND g.task = j.task)
     OR EXISTS (SELECT 1 FROM paused p WHERE p.queue = j.queue AND p.key = j.rate_key))
