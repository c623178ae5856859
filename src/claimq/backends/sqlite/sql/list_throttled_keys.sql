-- The rate keys a Throttled pauses now.
SELECT queue, key, throttled_until AS until FROM claimq_rate_keys
WHERE throttled_until > :now
ORDER BY queue, key
LIMIT 1000
