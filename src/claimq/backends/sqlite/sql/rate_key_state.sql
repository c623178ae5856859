-- One rate key's GCRA state and throttle in a queue (no row: a full bucket, no throttle).
SELECT tat, throttled_until FROM claimq_rate_keys WHERE queue = :queue AND key = :key
