-- Spends `n` of a rate-limited queue's tokens: its theoretical arrival time moves on n
-- emission intervals from :tat (the later of the stored one and now).
UPDATE claimq_queues SET rate_tat = :tat + :n * rate_period / rate_count
WHERE name = :queue AND rate_count IS NOT NULL
