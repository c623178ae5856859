SELECT id, name, idempotency_key, on_failure, created_at FROM claimq_workflows WHERE id = :id
