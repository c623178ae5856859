-- One rate key's GCRA state and throttle in a queue (no row: a full bucket, no throttle), read
-- while this transaction holds the queue's row.
SELECT tat, throttled_until FROM claimq_rate_keys
WHERE queue = %(queue)s AND rate_key = %(key)s
