-- Throttled raised by a job with a rate key: that key of its queue pauses for every worker
-- until :until (the rest of the queue flows on; throttle_queue.sql pauses a whole queue).
INSERT INTO claimq_rate_keys AS k (queue, key, throttled_until)
VALUES (:queue, :key, :until)
ON CONFLICT (queue, key) DO UPDATE
SET throttled_until = max(coalesce(k.throttled_until, excluded.throttled_until),
                          excluded.throttled_until)
