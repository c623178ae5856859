-- Spends %(n)s tokens of a rate key's bucket: its arrival time moves on n emission intervals
-- from %(tat)s (the later of the stored one and now); a throttle past is cleared.
INSERT INTO claimq_rate_keys (queue, rate_key, tat)
VALUES (%(queue)s, %(key)s, TIMESTAMPADD(MICROSECOND, %(n)s * %(interval_us)s, %(tat)s))
ON DUPLICATE KEY UPDATE
    tat = VALUES(tat),
    throttled_until = IF(throttled_until <= {now}, NULL, throttled_until)
