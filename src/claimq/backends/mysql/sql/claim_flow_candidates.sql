-- A flow-controlled queue's next due jobs in claim order, locked, but none whose concurrency key
-- already runs its limit (READ COMMITTED: the latest count); a few more than the claim can take
-- (%(scan)s), for keys with room for fewer jobs than they have waiting. With priority aging,
-- %(level)s (else NULL) reads only the oldest jobs of that one priority level. Jobs of an ordered
-- sequence come from claim_sequence_heads instead. %(gated)s (else NULL): the tasks whose circuit
-- breaker holds them back, left out; %(task)s (else NULL): only that task's jobs (a probe). None
-- of a rate key that is throttled or whose bucket is empty (its arrival time more than
-- %(key_full_us)s ahead; NULL: no per-key rate limit): the claim counts the tokens exactly.
-- Read on by key (claim_flow_window): %(key)s (else NULL) only that concurrency key's jobs,
-- %(unkeyed)s only those without one (both from claimq_jobs_keyed, in claim order).
SELECT {job_columns}, concurrency_key, concurrency_limit, rate_key, {now} AS now
FROM claimq_jobs j
WHERE queue = %(queue)s AND status = 'pending' AND run_at <= {now} AND sequence_key IS NULL
  AND (%(level)s IS NULL OR priority = %(level)s)
  AND (%(gated)s IS NULL OR NOT JSON_CONTAINS(%(gated)s, JSON_QUOTE(task)))
  AND (%(task)s IS NULL OR task = %(task)s)
  AND (%(key)s IS NULL OR concurrency_key = %(key)s)
  AND (NOT %(unkeyed)s OR concurrency_key IS NULL)
  AND (rate_key IS NULL
       OR NOT EXISTS (SELECT 1 FROM claimq_rate_keys k
                      WHERE k.queue = j.queue AND k.rate_key = j.rate_key
                        AND (k.throttled_until > {now}
                             OR k.tat > TIMESTAMPADD(MICROSECOND, %(key_full_us)s, {now}))))
  AND (concurrency_key IS NULL
       OR (SELECT count(*) FROM claimq_jobs r
           WHERE r.queue = j.queue AND r.concurrency_key = j.concurrency_key
             AND r.status IN ('fetched', 'processing')) < concurrency_limit)
ORDER BY priority DESC, run_at, id
LIMIT %(scan)s
FOR UPDATE SKIP LOCKED
