-- A queue with a circuit breaker is flow-controlled (the claim gates its tasks); the queue's
-- row is made if it has none.
INSERT INTO claimq_queues (name, breakers, created_at, updated_at)
VALUES (%(queue)s,
        EXISTS (SELECT 1 FROM claimq_breakers b WHERE b.queue = %(queue)s), {now}, {now})
ON DUPLICATE KEY UPDATE breakers = VALUES(breakers), updated_at = VALUES(updated_at)
