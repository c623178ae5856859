SELECT id, name, idempotency_key, on_failure, created_at FROM claimq_workflows
WHERE (:before IS NULL OR id < :before)
ORDER BY id DESC
LIMIT :limit
