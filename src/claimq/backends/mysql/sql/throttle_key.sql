-- Throttled raised by a job with a rate key: that key of its queue pauses for every worker for
-- %(after_us)s (the rest of the queue flows on; throttle_queue.sql pauses a whole queue).
INSERT INTO claimq_rate_keys (queue, rate_key, throttled_until)
VALUES (%(queue)s, %(key)s, TIMESTAMPADD(MICROSECOND, %(after_us)s, {now}))
ON DUPLICATE KEY UPDATE
    throttled_until = GREATEST(coalesce(throttled_until, VALUES(throttled_until)),
                               VALUES(throttled_until))
