-- A throttle that has passed: the queue claims as before.
UPDATE claimq_queues SET throttled_until = NULL WHERE name = :queue AND throttled_until <= :now
