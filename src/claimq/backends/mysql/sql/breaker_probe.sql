-- A breaker's probe claimed (half_open, probe_id), or its probe finished without a failure
-- (closed: probe_id NULL); only from the state the claim read.
UPDATE claimq_breakers
SET state = CASE WHEN %(probe_id)s IS NULL THEN 'closed' ELSE 'half_open' END,
    failures = CASE WHEN %(probe_id)s IS NULL THEN 0 ELSE failures END,
    window_until = CASE WHEN %(probe_id)s IS NULL THEN NULL ELSE window_until END,
    probe_id = %(probe_id)s,
    updated_at = {now}
WHERE queue = %(queue)s AND task = %(task)s AND state = %(state)s
