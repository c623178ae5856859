-- Why a due job `j` (pending, its run_at come) cannot be claimed now, or NULL when flow control
-- lets it through: the one rule of the "limited" state (find_jobs' `state`, count_states,
-- list_limited.sql), the same on every backend. In this order, the first that holds:
--   inactive    its queue is deactivated;
--   paused      its queue is paused;
--   throttled   a handler's Throttled pauses its queue (throttled_until ahead);
--   max_workers its queue has max_workers jobs fetched or processing;
--   concurrency its concurrency key has the job's concurrency_limit jobs of the queue fetched
--               or processing;
--   rate_key    a handler's Throttled pauses its rate key (claimq_rate_keys.throttled_until).
-- Not counted: an empty rate limit bucket (the queue's or a rate key's: it refills within a
-- period), a sequence's later jobs, an open circuit breaker (the Flow control tab lists them).
-- Each test is an index probe (the queue's row, the key's running jobs, the rate key's row).
coalesce(
    (SELECT CASE WHEN NOT q.active THEN 'inactive'
                 WHEN q.paused THEN 'paused'
                 WHEN q.throttled_until > :now THEN 'throttled'
                 WHEN q.max_workers IS NOT NULL
                      AND q.max_workers <= (SELECT count(*) FROM claimq_jobs r
                                            WHERE r.queue = q.name
                                              AND r.status IN ('fetched', 'processing'))
                     THEN 'max_workers' END
     FROM claimq_queues q WHERE q.name = j.queue),
    CASE WHEN j.concurrency_key IS NOT NULL
              AND j.concurrency_limit <= (SELECT count(*) FROM claimq_jobs r
                                          WHERE r.queue = j.queue
                                            AND r.concurrency_key = j.concurrency_key
                                            AND r.status IN ('fetched', 'processing'))
             THEN 'concurrency'
         WHEN j.rate_key IS NOT NULL
              AND EXISTS (SELECT 1 FROM claimq_rate_keys k
                          WHERE k.queue = j.queue AND k.key = j.rate_key
                            AND k.throttled_until > :now)
             THEN 'rate_key' END)
