-- Failed attempts with attempts left (locked rows): back to pending after each one's delay.
UPDATE claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', delay_us BIGINT PATH '$[1]',
    history LONGTEXT PATH '$[2]')) AS d ON d.item_id = j.id
SET j.status = 'pending',
    j.run_at = TIMESTAMPADD(MICROSECOND, d.delay_us, {now}),
    j.worker_id = NULL,
    j.claim_token = NULL,
    j.lease_until = NULL,
    j.heartbeat_at = NULL,
    j.updated_at = {now},
    j.errors = d.history
WHERE j.id IN %(ids)s
