-- A bounded batch of audit entries older than the App's audit_age (the pruner), oldest first.
DELETE FROM claimq_audit WHERE id IN (
    SELECT id FROM claimq_audit WHERE at < :before ORDER BY id LIMIT :batch
)
