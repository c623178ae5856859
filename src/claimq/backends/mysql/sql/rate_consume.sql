-- Spends `n` of a rate-limited queue's tokens: its theoretical arrival time moves on n emission
-- intervals from %(tat)s (the later of the stored one and now).
UPDATE claimq_queues
SET rate_tat = TIMESTAMPADD(MICROSECOND, ROUND(%(n)s * 1e6 * rate_period / rate_count), %(tat)s)
WHERE name = %(queue)s AND rate_count IS NOT NULL
