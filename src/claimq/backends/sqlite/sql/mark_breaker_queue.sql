-- A queue with a circuit breaker is flow-controlled (the claim gates its tasks).
UPDATE claimq_queues
SET breakers = EXISTS (SELECT 1 FROM claimq_breakers b WHERE b.queue = claimq_queues.name),
    updated_at = :now
WHERE name = :queue
