SELECT id FROM claimq_workflows WHERE idempotency_key = :key
