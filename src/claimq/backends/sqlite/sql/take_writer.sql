-- Takes SQLite's write lock inside a caller's open transaction (a write that changes nothing),
-- so that the key reads after it see every committed key and no other connection can commit
-- one before this transaction ends.
UPDATE claimq_idempotency SET job_id = job_id WHERE 0
