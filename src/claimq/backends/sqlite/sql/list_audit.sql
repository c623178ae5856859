SELECT * FROM claimq_audit
WHERE (:before IS NULL OR id < :before)
ORDER BY id DESC
LIMIT :limit
