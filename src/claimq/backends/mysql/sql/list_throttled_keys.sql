-- The rate keys a Throttled pauses now.
SELECT queue, rate_key, throttled_until FROM claimq_rate_keys
WHERE throttled_until > {now}
ORDER BY queue, rate_key
LIMIT 1000
