-- Hand locked, owned jobs back without counting the attempt against them (shutdown, pause).
UPDATE claimq_jobs
SET attempts = IF(status = 'processing', GREATEST(attempts - 1, 0), attempts),
    status = 'pending',
    run_at = IF(%(delay_us)s > 0, TIMESTAMPADD(MICROSECOND, %(delay_us)s, {now}), run_at),
    worker_id = NULL,
    claim_token = NULL,
    lease_until = NULL,
    heartbeat_at = NULL,
    started_at = NULL,
    updated_at = {now}
WHERE id IN %(ids)s
