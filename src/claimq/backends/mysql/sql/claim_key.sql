-- Takes an idempotency key for a job about to be inserted (job_id set after the insert); a key
-- already taken inserts nothing (and waits for a taker that has not committed yet).
INSERT IGNORE INTO claimq_idempotency (`key`, job_id, created_at) VALUES (%(key)s, 0, {now})
