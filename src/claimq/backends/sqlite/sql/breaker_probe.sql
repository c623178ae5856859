-- A breaker's probe claimed (half_open, probe_id), or its probe finished without a failure
-- (closed: probe_id NULL); only from the state the claim read.
UPDATE claimq_breakers
SET state = CASE WHEN :probe_id IS NULL THEN 'closed' ELSE 'half_open' END,
    probe_id = :probe_id,
    failures = CASE WHEN :probe_id IS NULL THEN 0 ELSE failures END,
    window_until = CASE WHEN :probe_id IS NULL THEN NULL ELSE window_until END,
    updated_at = :now
WHERE queue = :queue AND task = :task AND state = :state
