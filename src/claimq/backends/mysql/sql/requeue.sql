-- Expired leases with attempts left (locked rows): back to pending, the expiry in the history.
UPDATE claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', history LONGTEXT PATH '$[1]')) AS d ON d.item_id = j.id
SET j.status = 'pending',
    j.worker_id = NULL,
    j.claim_token = NULL,
    j.lease_until = NULL,
    j.heartbeat_at = NULL,
    j.updated_at = {now},
    j.errors = d.history
WHERE j.id IN %(ids)s
