-- Spends `n` tokens of a rate key's bucket: its arrival time moves on n emission intervals
-- from :tat (the later of the stored one and now); a throttle past is cleared.
INSERT INTO claimq_rate_keys AS k (queue, key, tat)
VALUES (:queue, :key, :tat + :n * :interval)
ON CONFLICT (queue, key) DO UPDATE
SET tat = excluded.tat,
    throttled_until = CASE WHEN k.throttled_until <= :now THEN NULL ELSE k.throttled_until END
