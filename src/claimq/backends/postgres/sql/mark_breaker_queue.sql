-- A queue with a circuit breaker is flow-controlled (claim_flow.sql gates its tasks).
UPDATE {schema}.queues q
SET breakers = EXISTS (SELECT 1 FROM {schema}.breakers b WHERE b.queue = q.name),
    updated_at = {now}
WHERE q.name = %(queue)s
