-- A half_open breaker whose probe was dead-lettered without a failure written (the reaper
-- buried it, it was cancelled): open again for its cool-down, as a failed probe opens it.
UPDATE claimq_breakers
SET state = 'open',
    probe_id = NULL,
    opened_at = :now,
    open_until = :now + cooldown_seconds,
    updated_at = :now
WHERE queue = :queue AND task = :task AND state = :state
