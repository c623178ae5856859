-- A half_open breaker whose probe was dead-lettered without a failure written (the reaper
-- buried it, it was cancelled): open again for its cool-down, as a failed probe opens it.
UPDATE claimq_breakers
SET state = 'open',
    probe_id = NULL,
    opened_at = {now},
    open_until = TIMESTAMPADD(MICROSECOND, CAST(cooldown_seconds * 1000000 AS INT), {now}),
    updated_at = {now}
WHERE queue = %(queue)s AND task = %(task)s AND state = %(state)s
