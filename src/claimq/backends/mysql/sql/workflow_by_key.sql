-- The workflow a key names (its INSERT met the unique index: it is committed).
SELECT id FROM claimq_workflows WHERE idempotency_key = %(key)s
