INSERT INTO claimq_workflows (name, idempotency_key, on_failure, created_at)
VALUES (:name, :key, :on_failure, :now)
RETURNING id
