-- The worker's heartbeat of its own row; no row: it was pruned (the worker registers again).
-- The row count is the rows matched (CLIENT_FOUND_ROWS): 1 even when nothing changed.
UPDATE claimq_workers SET last_seen_at = {now}, in_flight = %(in_flight)s, dead_at = NULL
WHERE id = %(id)s
