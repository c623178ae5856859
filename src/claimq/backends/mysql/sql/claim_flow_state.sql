-- A flow-controlled queue's rate limit and GCRA state, its priority aging, its throttle and
-- whether it was given keyed jobs (concurrency, sequence or rate keys) or has circuit breakers,
-- its per-key rate limit, read
-- while this transaction holds the queue's row (lock_limited_queues).
SELECT rate_count, rate_period, rate_burst, rate_tat, aging_step, aging_cap, throttled_until,
       keyed, breakers, key_rate_count, key_rate_period, key_rate_burst,
       {now} AS now
FROM claimq_queues
WHERE name = %(queue)s
