-- Takes an idempotency key that has no row yet, for a job about to be inserted (job_id set after
-- the insert); a key another enqueue took meanwhile inserts nothing (its taker waited for).
INSERT IGNORE INTO claimq_idempotency (`key`, job_id, created_at) VALUES (%(key)s, 0, {now})
