-- The worker's heartbeat of its own row; no row: it was pruned (the worker registers again).
UPDATE claimq_workers SET last_seen_at = :now, in_flight = :in_flight, dead_at = NULL
WHERE id = :id
RETURNING id
